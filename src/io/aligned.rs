//! Page-aligned heap buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any logical block size up to 4 KiB.
pub const ALIGN: usize = 4096;

/// A zeroed, `ALIGN`-aligned buffer of a fixed length.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// The buffer owns its memory exclusively; moving it between threads is sound.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` bytes (rounded up to a whole page, and at least one page). For small
    /// buffers of a fixed size; a size that comes from the user goes through [`AlignedBuf::try_new`].
    pub fn new(len: usize) -> AlignedBuf {
        let cap = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(cap, ALIGN).expect("page-aligned layout");
        Self::try_new(len).unwrap_or_else(|_| handle_alloc_error(layout))
    }

    /// `new`, or an error naming `len` when the allocation is refused (out of memory, or the
    /// process's own limits such as `ulimit -v`), rather than the abort a failed allocation is.
    pub fn try_new(len: usize) -> crate::error::Result<AlignedBuf> {
        let cap = len.max(1).div_ceil(ALIGN) * ALIGN;
        let refused = || crate::error::Error::OutOfMemory { bytes: cap as u64 };
        let layout = Layout::from_size_align(cap, ALIGN).map_err(|_| refused())?;
        // SAFETY: layout has non-zero size.
        let p = unsafe { alloc(layout) };
        let ptr = NonNull::new(p).ok_or_else(refused)?;
        // Touch every page now, in order: the kernel then tends to back the buffer with physically
        // adjacent pages, which merge into few DMA segments. Left to be faulted in by the first
        // O_DIRECT read, a 1 MiB buffer was split into two device requests here (virtio-blk allows
        // 254 segments) and sequential reads ran at half of fio's rate.
        // SAFETY: the allocation is cap bytes long.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, cap) };
        Ok(AlignedBuf { ptr, len })
    }

    /// `try_new` without touching: the pages are reserved but not yet backed, so allocating
    /// thousands of ring buffers takes milliseconds, and the seconds of first-touching them can
    /// be spent on other threads while the run does other work (`touch`).
    ///
    /// # Safety
    /// The bytes are uninitialised: nothing may read them (through `Deref` or a pointer) until
    /// `touch` has run on the whole buffer.
    pub unsafe fn try_new_untouched(len: usize) -> crate::error::Result<AlignedBuf> {
        let cap = len.max(1).div_ceil(ALIGN) * ALIGN;
        let refused = || crate::error::Error::OutOfMemory { bytes: cap as u64 };
        let layout = Layout::from_size_align(cap, ALIGN).map_err(|_| refused())?;
        // SAFETY: layout has non-zero size.
        let p = unsafe { alloc(layout) };
        let ptr = NonNull::new(p).ok_or_else(refused)?;
        Ok(AlignedBuf { ptr, len })
    }

    /// Zeroes the buffer at `ptr`, `len` bytes rounded up to whole pages as `try_new` does
    /// (in order, for the physically adjacent pages `try_new` explains): its pages are backed
    /// and its bytes initialised.
    ///
    /// # Safety
    /// `ptr` is the start of an `AlignedBuf` of `len` bytes, and nothing else reads or writes
    /// it meanwhile.
    pub unsafe fn touch(ptr: *mut u8, len: usize) {
        let cap = len.max(1).div_ceil(ALIGN) * ALIGN;
        // SAFETY: the caller's contract; the allocation is cap bytes long.
        unsafe { std::ptr::write_bytes(ptr, 0, cap) };
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    fn layout(&self) -> Layout {
        Layout::from_size_align(self.len.max(1).div_ceil(ALIGN) * ALIGN, ALIGN)
            .expect("page-aligned layout")
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with the same layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        for len in [1, 512, 4096, 65536 + 7] {
            let b = AlignedBuf::new(len);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn an_untouched_buffer_is_aligned_and_zero_once_touched() {
        for len in [1, 4096, 65536 + 7] {
            // SAFETY: touched whole before it is read.
            let mut b = unsafe { AlignedBuf::try_new_untouched(len) }.unwrap();
            assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
            // SAFETY: the buffer's own start and length, nothing else using it.
            unsafe { AlignedBuf::touch(b.as_mut_ptr(), len) };
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
        }
    }
}
