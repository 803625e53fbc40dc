//! The tiles a client delivered lately, kept in memory so that a tile shown again (a map panned
//! back) is handed out at once, without a request, as a page's `<img>` loader reuses the images
//! it has shown. Bounded in bytes and in entries; the least recently used go first; an entry
//! past its freshness ([`crate::response::freshness`]) is never handed out. Keyed by the flight
//! key, so only an identical call is served (same URL, headers, fields and verdict rules), held
//! as two 64-bit hashes of it: an entry's size is fixed (a store that is full allocates no more,
//! whatever its URLs), and the store's keys hold no URL, nor a secret in one.
//!
//! Which calls it serves and which answers it keeps are [`serves`] and [`keeps`].

/// The most entries kept, however small: a look-up reads every entry's key.
pub const MAX_ENTRIES: usize = 2048;

/// Whether a call may be served from the recent tiles: not one whose fetch `cache` mode asks the
/// network for a fresh answer, one with a `fetch` of its own (the function is no part of what
/// makes calls identical, and it may want its own answer: the adapters' image loads, a first
/// contact's CORS check), nor one with `maxAgeS` (its tile's age is the server's to say).
pub fn serves(cache: Option<&str>, own_fetch: bool, max_age_s: Option<f64>) -> bool {
    !own_fetch && max_age_s.is_none() && !matches!(cache, Some("no-store" | "reload" | "no-cache"))
}

/// Whether a call's answer may be kept: not with `cache: "no-store"`, nor with `maxAgeS` (an
/// answer it took because a refetch past every cache failed is one a cache held too long).
/// What a call with a `fetch` of its own gets is kept; a stand-in answer says `no-store`.
pub fn keeps(cache: Option<&str>, max_age_s: Option<f64>) -> bool {
    max_age_s.is_none() && cache != Some("no-store")
}
/// No one tile takes more than this share of the bound: one large answer does not empty it.
const LARGEST_SHARE: usize = 4;

struct Entry<T> {
    value: T,
    bytes: usize,
    fresh_until_ms: f64,
}

/// What a look-up and the choice of the entry to drop read of an entry, held apart from the
/// entries (`slots[i]` is `entries[i]`'s): each call's look-up scans every key of a store that
/// may hold thousands, and a scan of these reads no tile's fields.
struct Slot {
    key: KeyHash,
    /// When it was last put or handed out, by the store's count of uses.
    used: u64,
}

/// Recently delivered tiles, in no order (each slot says when it was last used): entries are
/// swapped out, not shifted.
pub struct RecentTiles<T> {
    max_bytes: usize,
    bytes: usize,
    uses: u64,
    slots: Vec<Slot>,
    entries: Vec<Entry<T>>,
}

/// A key as two 64-bit hashes (FNV-1a, and a multiply-rotate hash seeded with the length): two
/// distinct keys are taken for each other only when both collide. Not a defence against keys
/// made to collide: every key is the page's own calls'.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct KeyHash(u64, u64);

fn hash_of(key: &str) -> KeyHash {
    let mut mix = key.len() as u64;
    for b in key.bytes() {
        mix = (mix ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    KeyHash(super::key_hash(key), mix)
}

impl<T: Clone> RecentTiles<T> {
    /// An empty store of at most `max_bytes` (0: keeps nothing).
    pub fn new(max_bytes: usize) -> RecentTiles<T> {
        RecentTiles { max_bytes, bytes: 0, uses: 0, slots: Vec::new(), entries: Vec::new() }
    }

    /// Whether it keeps anything at all.
    pub fn is_on(&self) -> bool {
        self.max_bytes > 0
    }

    /// The tile kept under `key`, if still fresh at `now_ms` (it becomes the most recently
    /// used); a stale one is dropped.
    pub fn get(&mut self, key: &str, now_ms: f64) -> Option<T> {
        let i = self.find(key)?;
        if now_ms >= self.entries[i].fresh_until_ms {
            self.forget(i);
            return None;
        }
        self.uses += 1;
        self.slots[i].used = self.uses;
        Some(self.entries[i].value.clone())
    }

    fn find(&self, key: &str) -> Option<usize> {
        // An empty store (off, or a server whose answers say no-store) costs a call no hashing.
        if self.slots.is_empty() {
            return None;
        }
        self.position(hash_of(key))
    }

    fn position(&self, key: KeyHash) -> Option<usize> {
        self.slots.iter().position(|slot| slot.key == key)
    }

    fn forget(&mut self, i: usize) {
        self.slots.swap_remove(i);
        self.bytes -= self.entries.swap_remove(i).bytes;
    }

    /// Keeps `value` (`bytes` long) under `key` until `fresh_until_ms`, in place of any older
    /// one, dropping the least recently used to stay within the bounds; whether it was kept (a
    /// tile larger than a quarter of the bound is not, and the older one is forgotten all the
    /// same).
    pub fn put(&mut self, key: &str, value: T, bytes: usize, fresh_until_ms: f64) -> bool {
        // A newer answer replaces the one kept, whether or not it is kept itself.
        let key = hash_of(key);
        if let Some(i) = self.position(key) {
            self.forget(i);
        }
        if !self.is_on() || bytes > self.max_bytes / LARGEST_SHARE {
            return false;
        }
        while self.bytes + bytes > self.max_bytes || self.entries.len() >= MAX_ENTRIES {
            let oldest = (0..self.slots.len()).min_by_key(|&i| self.slots[i].used);
            match oldest {
                Some(i) => self.forget(i),
                None => break,
            }
        }
        self.uses += 1;
        self.bytes += bytes;
        self.slots.push(Slot { key, used: self.uses });
        self.entries.push(Entry { value, bytes, fresh_until_ms });
        true
    }

    /// Forgets the tile kept under `key`, if any (a newer answer that may not be kept).
    pub fn remove(&mut self, key: &str) {
        if let Some(i) = self.find(key) {
            self.forget(i);
        }
    }

    /// The bytes kept now.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The entries kept now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_tile_is_handed_out_and_a_stale_one_dropped() {
        let mut recent = RecentTiles::new(1000);
        recent.put("a", 1, 100, 50.0);
        assert_eq!(recent.get("a", 49.0), Some(1));
        assert_eq!(recent.get("b", 49.0), None);
        assert_eq!(recent.get("a", 50.0), None);
        assert_eq!((recent.len(), recent.bytes()), (0, 0));
    }

    #[test]
    fn the_least_recently_used_go_first_to_stay_within_the_bytes() {
        let mut recent = RecentTiles::new(1000);
        for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
            recent.put(key, i, 250, f64::INFINITY);
        }
        assert_eq!(recent.get("a", 0.0), Some(0)); // now b is the oldest
        recent.put("d", 3, 250, f64::INFINITY);
        recent.put("e", 4, 250, f64::INFINITY);
        assert_eq!(recent.get("b", 0.0), None);
        assert_eq!(recent.get("a", 0.0), Some(0));
        assert_eq!((recent.len(), recent.bytes()), (4, 1000));
    }

    #[test]
    fn a_key_put_again_replaces_its_entry() {
        let mut recent = RecentTiles::new(1000);
        recent.put("a", 1, 200, f64::INFINITY);
        recent.put("a", 2, 100, f64::INFINITY);
        assert_eq!(recent.get("a", 0.0), Some(2));
        assert_eq!((recent.len(), recent.bytes()), (1, 100));
    }

    #[test]
    fn a_large_tile_is_not_kept_and_a_zero_bound_keeps_nothing() {
        let mut recent = RecentTiles::new(1000);
        assert!(recent.put("big", 1, 200, f64::INFINITY));
        assert!(!recent.put("big", 2, 251, f64::INFINITY));
        assert_eq!(recent.get("big", 0.0), None, "the older answer is forgotten too");
        recent.put("a", 1, 10, f64::INFINITY);
        recent.remove("a");
        assert_eq!((recent.get("a", 0.0), recent.len()), (None, 0));
        let mut off = RecentTiles::new(0);
        assert!(!off.is_on());
        off.put("a", 1, 0, f64::INFINITY);
        assert_eq!(off.get("a", 0.0), None);
    }

    #[test]
    fn keys_that_differ_anywhere_are_different_entries() {
        let mut recent = RecentTiles::new(usize::MAX);
        let keys =
            ["https://t/1/2/3.png", "https://t/1/2/3.pn", "https://t/1/3/2.png", "https://t/1/2/3.png\nx"];
        for (i, key) in keys.iter().enumerate() {
            recent.put(key, i, 1, f64::INFINITY);
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(recent.get(key, 0.0), Some(i), "{key}");
        }
        assert_eq!(recent.get("", 0.0), None);
    }

    #[test]
    fn calls_that_ask_the_network_are_not_served_and_no_store_is_not_kept() {
        assert!(
            serves(None, false, None)
                && serves(Some("default"), false, None)
                && serves(Some("force-cache"), false, None)
        );
        for cache in ["no-store", "reload", "no-cache"] {
            assert!(!serves(Some(cache), false, None), "{cache}");
        }
        assert!(!serves(None, true, None), "a fetch of its own");
        assert!(!serves(None, false, Some(60.0)), "maxAgeS");
        assert!(keeps(None, None) && keeps(Some("reload"), None) && keeps(Some("no-cache"), None));
        assert!(!keeps(Some("no-store"), None) && !keeps(None, Some(60.0)));
    }

    #[test]
    fn entries_are_bounded_in_number_too() {
        let mut recent = RecentTiles::new(usize::MAX);
        for i in 0..MAX_ENTRIES + 10 {
            recent.put(&i.to_string(), i, 1, f64::INFINITY);
        }
        assert_eq!(recent.len(), MAX_ENTRIES);
        assert_eq!(recent.get("9", 0.0), None);
        assert_eq!(recent.get("10", 0.0), Some(10));
    }
}
