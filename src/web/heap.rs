//! The module's allocator: power-of-two blocks, one free list per size, fresh memory from
//! `memory.grow`. std's allocator for wasm (dlmalloc) is larger (ARCHITECTURE.md's ledger); loading tiles
//! allocates the same few sizes over and over (option entries, URLs, messages), which per-size
//! free lists serve without a search, and a steady workload settles at a steady memory size
//! (the soak test counts the module's memory over 100,000 calls). Freed blocks are reused for
//! their size only; memory is never returned, as with dlmalloc on wasm.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::arch::wasm32::memory_grow;
use std::cell::Cell;
use std::ptr;

use crate::size_class::{block_size, class_of, place, run_size, CLASSES, PAGE};

struct Heap {
    /// The first free block of each class (0: none); a free block's first word is the next one.
    free: [Cell<usize>; CLASSES],
    /// Memory not yet cut into blocks: `[bump, end)`.
    bump: Cell<usize>,
    end: Cell<usize>,
}

// SAFETY: the module is built for wasm32-unknown-unknown without the atomics feature: one
// thread, and no heap method calls out of the module, so nothing runs while one is running.
unsafe impl Sync for Heap {}

#[global_allocator]
static HEAP: Heap = Heap { free: [const { Cell::new(0) }; CLASSES], bump: Cell::new(0), end: Cell::new(0) };

impl Heap {
    /// A new block of `class` (0 when memory cannot grow); the rest of its run goes to the free list.
    fn refill(&self, class: usize) -> usize {
        let run = run_size(class);
        let start = loop {
            match place(self.bump.get(), self.end.get(), run) {
                Ok(start) => break start,
                Err(0) => return 0,
                Err(pages) => {
                    let old = memory_grow::<0>(pages);
                    if old == usize::MAX {
                        return 0;
                    }
                    let base = old * PAGE;
                    // Memory that ends at 4 GiB has no address past it: the grown run is unusable.
                    let Some(end) = pages.checked_mul(PAGE).and_then(|bytes| base.checked_add(bytes)) else {
                        return 0;
                    };
                    if base != self.end.get() {
                        // Not next to the old end (the first growth, or memory grown by someone
                        // else): the old remainder is left unused.
                        self.bump.set(base);
                    }
                    self.end.set(end);
                }
            }
        };
        self.bump.set(start + run);
        let block = block_size(class);
        let mut rest = start + run;
        while rest > start + block {
            rest -= block;
            self.push(class, rest);
        }
        start
    }

    fn push(&self, class: usize, block: usize) {
        // SAFETY: `block` is a free block of at least 16 bytes, aligned to 16, that nothing else
        // uses: a word at its start is ours to write.
        unsafe { ptr::write(block as *mut usize, self.free[class].get()) };
        self.free[class].set(block);
    }
}

// SAFETY: every block handed out is at least `layout.size()` bytes, aligned to `layout.align()`
// (class_of picks a block of at least both; runs are aligned to their block size or a page), and
// belongs to one caller until it is given back: a block is either on one free list or handed out.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout.size(), layout.align()) else { return ptr::null_mut() };
        let head = self.free[class].get();
        let block = if head == 0 {
            self.refill(class)
        } else {
            // SAFETY: `head` is on the free list, so its first word holds the next free block.
            self.free[class].set(unsafe { ptr::read(head as *const usize) });
            head
        };
        block as *mut u8
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if let Some(class) = class_of(layout.size(), layout.align()) {
            self.push(class, block as usize);
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A Vec or String that grows within its block keeps it.
        let class = class_of(layout.size(), layout.align());
        if class.is_some() && class == class_of(new_size, layout.align()) {
            return block;
        }
        // SAFETY: the caller guarantees `new_size`, rounded up to `layout.align()`, does not
        // overflow isize, and the alignment is the one `layout` already has.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: new_size is not zero (GlobalAlloc::realloc's contract).
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks hold at least the smaller size and are distinct blocks.
            unsafe {
                ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                self.dealloc(block, layout);
            }
        }
        moved
    }
}
