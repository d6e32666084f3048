/**
 * A stream client's place: the newest notification id it has received, which it subscribes
 * again with (`since`). Not the last one: notifications do not always arrive in id order (two
 * processes commit out of their ids' order, a fan-out comes late), and a catch-up sends again
 * what a device confirmed after `since` (another reader of the device may have confirmed it),
 * so a place moved back to an older id would show again one already shown. Ids are UUIDv7 in
 * lower case: their order as strings is their order in time; "" is before every id.
 */
export const placeAfter = (place: string, id: string): string => (id > place ? id : place);
