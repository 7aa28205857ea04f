//! Page-aligned heap buffers, as O_DIRECT and registered io_uring buffers need.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any logical block size up to 4 KiB.
pub const ALIGN: usize = 4096;

/// A zeroed, `ALIGN`-aligned buffer of a fixed length: from the heap, or (rings) mapped straight
/// from the operating system.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// Mapped from the operating system (`try_mapped`), not allocated on the heap.
    mapped: bool,
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
        Ok(AlignedBuf {
            ptr,
            len,
            mapped: false,
        })
    }

    /// A ring's memory: `try_new`, but mapped straight from the operating system (mmap,
    /// VirtualAlloc) and touched in order. A heap allocator keeps its header for a page-aligned
    /// block in the page before it, so each heap-allocated ring also held one page beside it:
    /// 10,000 one-MiB rings took 39 MiB more than their bytes (docs/lab/memory.md, "At
    /// 10,000 tracks it was not"). Mapped, a ring costs its pages and nothing else. Not for buffers
    /// allocated and freed again and again: each mapping's pages are new, where the heap reuses
    /// what it has touched.
    pub fn try_mapped(len: usize) -> crate::error::Result<AlignedBuf> {
        // SAFETY: touched whole before it is returned.
        let b = unsafe { Self::try_mapped_untouched(len) }?;
        // SAFETY: the buffer's own start and length, not yet shared.
        unsafe { Self::touch(b.ptr.as_ptr(), len) };
        Ok(b)
    }

    /// `try_mapped` without touching: the pages are reserved but not yet backed, so mapping
    /// thousands of ring buffers takes milliseconds, and the seconds of first-touching them can
    /// be spent on other threads while the run does other work (`touch`).
    ///
    /// # Safety
    /// The bytes are not to be read (through `Deref` or a pointer) until `touch` has run on
    /// the whole buffer.
    pub unsafe fn try_mapped_untouched(len: usize) -> crate::error::Result<AlignedBuf> {
        let cap = len.max(1).div_ceil(ALIGN) * ALIGN;
        let ptr = map_pages(cap).ok_or(crate::error::Error::OutOfMemory { bytes: cap as u64 })?;
        Ok(AlignedBuf {
            ptr,
            len,
            mapped: true,
        })
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
        if self.mapped {
            // SAFETY: mapped by `map_pages` with this length, and no longer used.
            unsafe { unmap_pages(self.ptr, self.layout().size()) }
        } else {
            // SAFETY: allocated in try_new() with the same layout.
            unsafe { dealloc(self.ptr.as_ptr(), self.layout()) }
        }
    }
}

/// `len` bytes (a whole number of pages) of new, zero, page-aligned memory from the operating
/// system, or none where it refuses (out of memory, the process's address-space limit).
#[cfg(unix)]
fn map_pages(len: usize) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    NonNull::new(p.cast())
}

/// Gives back what `map_pages` mapped.
///
/// # Safety
/// `ptr` and `len` are a mapping of `map_pages`, not used afterwards.
#[cfg(unix)]
unsafe fn unmap_pages(ptr: NonNull<u8>, len: usize) {
    // SAFETY: the caller's contract. A failure could only mean arguments that were never
    // mapped; there is nothing to do about it in a destructor.
    unsafe { libc::munmap(ptr.as_ptr().cast(), len) };
}

#[cfg(windows)]
fn map_pages(len: usize) -> Option<NonNull<u8>> {
    use windows_sys::Win32::System::Memory::{
        MEM_COMMIT, MEM_RESERVE, PAGE_READWRITE, VirtualAlloc,
    };
    // SAFETY: a new allocation at an address of the system's choosing.
    let p = unsafe {
        VirtualAlloc(
            std::ptr::null(),
            len,
            MEM_COMMIT | MEM_RESERVE,
            PAGE_READWRITE,
        )
    };
    NonNull::new(p.cast())
}

/// Gives back what `map_pages` mapped.
///
/// # Safety
/// `ptr` is an allocation of `map_pages`, not used afterwards.
#[cfg(windows)]
unsafe fn unmap_pages(ptr: NonNull<u8>, _len: usize) {
    use windows_sys::Win32::System::Memory::{MEM_RELEASE, VirtualFree};
    // SAFETY: the caller's contract; MEM_RELEASE frees the whole allocation (size 0).
    unsafe { VirtualFree(ptr.as_ptr().cast(), 0, MEM_RELEASE) };
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
    fn a_mapped_buffer_is_aligned_zero_and_writable() {
        for len in [1, 4096, 65536 + 7, 1 << 20] {
            let mut b = AlignedBuf::try_mapped(len).unwrap();
            assert_eq!(b.as_ptr() as usize % ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            b.fill(0xa5);
            assert!(b.iter().all(|&x| x == 0xa5));
        }
    }

    #[test]
    fn a_refused_mapping_is_an_error_naming_its_size() {
        // More than any address space holds: the system refuses it.
        let huge = usize::MAX / 2 / ALIGN * ALIGN;
        // SAFETY: never read (the mapping is refused).
        match unsafe { AlignedBuf::try_mapped_untouched(huge) } {
            Err(crate::error::Error::OutOfMemory { bytes }) => assert_eq!(bytes, huge as u64),
            Err(e) => panic!("refused with another error: {e}"),
            Ok(_) => panic!("a mapping of {huge} bytes was granted"),
        }
    }

    #[test]
    fn an_untouched_buffer_is_aligned_and_zero_once_touched() {
        for len in [1, 4096, 65536 + 7] {
            // SAFETY: touched whole before it is read.
            let mut b = unsafe { AlignedBuf::try_mapped_untouched(len) }.unwrap();
            assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
            // SAFETY: the buffer's own start and length, nothing else using it.
            unsafe { AlignedBuf::touch(b.as_mut_ptr(), len) };
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
        }
    }
}
