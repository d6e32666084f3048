/**
 * This browser as a receiving device: its id, platform and device credential, kept in
 * IndexedDB, where the service worker (which has no localStorage) reads it to acknowledge what
 * it shows. A device credential can only receive, never publish or read other devices' data.
 */
export interface SavedDevice {
  id: string;
  credential: string;
  platform: "web" | "stream";
  /** The last notification a stream device saw, to catch up from. */
  cursor?: string;
}

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open("herald", 1);
    req.onupgradeneeded = () => req.result.createObjectStore("device");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function run<T>(mode: IDBTransactionMode, op: (s: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await open();
  return new Promise((resolve, reject) => {
    const req = op(db.transaction("device", mode).objectStore("device"));
    req.onsuccess = () => resolve(req.result as T);
    req.onerror = () => reject(req.error);
  });
}

export const loadDevice = () => run<SavedDevice | undefined>("readonly", (s) => s.get("this"));
export const saveDevice = (d: SavedDevice) => run<unknown>("readwrite", (s) => s.put(d, "this"));
export const forgetDevice = () => run<unknown>("readwrite", (s) => s.delete("this"));
