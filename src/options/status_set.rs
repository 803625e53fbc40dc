//! A set of HTTP status codes (100–599) as a bitmap: `contains` is one shift and one mask, which
//! matters because classification runs on every attempt.

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StatusSet([u64; 8]);

impl StatusSet {
    pub const EMPTY: StatusSet = StatusSet([0; 8]);

    pub const fn of(codes: &[u16]) -> StatusSet {
        let mut set = StatusSet::EMPTY;
        let mut i = 0;
        while i < codes.len() {
            set = set.with(codes[i]);
            i += 1;
        }
        set
    }

    /// Adds `code`; codes outside 100–599 are ignored (options validation rejects them first).
    pub const fn with(mut self, code: u16) -> StatusSet {
        if code >= 100 && code < 600 {
            let bit = (code - 100) as usize;
            self.0[bit / 64] |= 1 << (bit % 64);
        }
        self
    }

    pub const fn contains(&self, code: u16) -> bool {
        if code < 100 || code >= 600 {
            return false;
        }
        let bit = (code - 100) as usize;
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// The bitmap's words: equal sets, equal words (what a key that tells sets apart needs).
    pub fn words(&self) -> [u64; 8] {
        self.0
    }

    /// The codes in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        self.0.iter().enumerate().flat_map(|(word, &bits)| {
            let mut rest = bits;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                Some(100 + (word * 64) as u16 + bit as u16)
            })
        })
    }
}

impl core::fmt::Debug for StatusSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_matches_the_codes_given() {
        let set = StatusSet::of(&[100, 204, 429, 503, 599]);
        for code in 0..1000u16 {
            assert_eq!(set.contains(code), [100, 204, 429, 503, 599].contains(&code), "{code}");
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![100, 204, 429, 503, 599]);
    }

    #[test]
    fn out_of_range_codes_are_ignored() {
        let set = StatusSet::EMPTY.with(99).with(600).with(0);
        assert_eq!(set, StatusSet::EMPTY);
    }
}
