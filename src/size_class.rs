//! The arithmetic of the wasm module's allocator (`web::heap`): which power-of-two block serves a
//! request and how fresh memory is cut into blocks. Plain numbers, tested natively.

/// The smallest block: room for the free list's link and the alignment Rust asks of most types.
pub const MIN_BLOCK: usize = 16;
/// Fresh memory is cut into runs of at least this many bytes, so a size class that is used once
/// does not cost a whole 64 KiB page.
pub const RUN: usize = 4096;
/// One wasm page.
pub const PAGE: usize = 65536;
/// Size classes 16 B, 32 B, … 2 GiB: the block size is `MIN_BLOCK << class`.
pub const CLASSES: usize = 28;

/// The class whose blocks hold `size` bytes at `align`, or `None` when none can: over 2 GiB
/// (more than wasm32 memory holds) or aligned beyond a page (blocks are at most page-aligned).
pub fn class_of(size: usize, align: usize) -> Option<usize> {
    if align > PAGE {
        return None;
    }
    let block = size.max(align).max(MIN_BLOCK).checked_next_power_of_two()?;
    let class = (block / MIN_BLOCK).trailing_zeros() as usize;
    (class < CLASSES).then_some(class)
}

/// The block size of `class`, in bytes.
pub fn block_size(class: usize) -> usize {
    MIN_BLOCK << class
}

/// How many bytes a refill of `class` takes: a run of blocks, or one block when a block is larger
/// than a run.
pub fn run_size(class: usize) -> usize {
    block_size(class).max(RUN)
}

/// Where a run of `run` bytes (a power of two) goes in the fresh space `[bump, end)`:
/// `Ok(start)`, or `Err(pages)` to grow memory by first (`Err(0)`: it cannot be placed). A run
/// starts at a multiple of its size up to a page, so each block is aligned to its own size (and
/// so to any alignment up to it) or to a page.
pub fn place(bump: usize, end: usize, run: usize) -> Result<usize, usize> {
    let align = run.min(PAGE);
    let Some(start) = bump.checked_add(align - 1).map(|s| s & !(align - 1)) else { return Err(0) };
    match start.checked_add(run) {
        Some(stop) if stop <= end => Ok(start),
        Some(stop) => Err((stop - end).div_ceil(PAGE)),
        None => Err(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_gets_a_block_that_holds_it_at_its_alignment() {
        for size in [0, 1, 7, 8, 15, 16, 17, 31, 33, 100, 4095, 4096, 4097, 65_536, 1 << 20, (1 << 31) - 1] {
            for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
                let class = class_of(size, align).unwrap();
                let block = block_size(class);
                assert!(block >= size && block >= align && block.is_power_of_two(), "{size} {align}");
                // And the next class down would not have done.
                if class > 0 {
                    assert!(
                        block / 2 < size.max(align).max(MIN_BLOCK),
                        "{size} {align}: {block} is wasteful"
                    );
                }
                let run = run_size(class);
                assert!(run % block == 0 && run.is_power_of_two());
            }
        }
    }

    #[test]
    fn requests_no_block_can_hold_are_refused() {
        assert_eq!(class_of(1 << 31, 8), Some(CLASSES - 1));
        assert_eq!(class_of((1 << 31) + 1, 8), None);
        assert_eq!(class_of(usize::MAX, 8), None);
    }

    #[test]
    fn runs_start_aligned_and_memory_grows_by_the_pages_missing() {
        for (bump, run) in
            [(0, 4096), (1, 4096), (4096, 4096), (4097, 8192), (65_536, 65_536), (65_536, 1 << 20)]
        {
            let end = 1 << 24;
            let start = place(bump, end, run).unwrap();
            assert!(start >= bump && start % run.min(PAGE) == 0 && start - bump < run.min(PAGE));
        }
        assert_eq!(place(0, 65_536, 4096), Ok(0));
        assert_eq!(place(61_440, 65_536, 4096), Ok(61_440));
        assert_eq!(place(61_441, 65_536, 4096), Err(1));
        assert_eq!(place(65_536, 65_536, 3 * PAGE + 1), Err(4));
        assert_eq!(place(usize::MAX - 10, usize::MAX, 4096), Err(0));
    }
}
