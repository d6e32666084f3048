/**
 * A JSON array of ids as a set of uuids, for `in …` with one parameter: the driver would expand a
 * JS array into one parameter per id.
 */
export const jsonIds = "(select (json_array_elements_text(?::json))::uuid)";
