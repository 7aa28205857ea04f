//! Verifiable test content: every 4 KiB block carries a tag (file, offset) and deterministic noise,
//! so reads can be checked and compression or deduplication cannot flatter a result.

use rand::{RngCore, SeedableRng, rngs::SmallRng};
use std::sync::OnceLock;

/// The unit that carries one tag.
pub const BLOCK: usize = 4096;
const TAG_LEN: usize = 16;
const MAGIC: [u8; 4] = *b"TBk1";
/// Noise repeats every this many blocks of a file; the tag still makes every block unique.
const POOL_BLOCKS: u64 = 256;
const POOL_BYTES: u64 = POOL_BLOCKS * BLOCK as u64;

fn pool() -> &'static [u8] {
    static POOL: OnceLock<Vec<u8>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut v = vec![0u8; POOL_BYTES as usize];
        SmallRng::seed_from_u64(0x7472_6163_6b62_656e).fill_bytes(&mut v);
        v
    })
}

/// Builds the noise pool now, off any real-time path (it is allocated once, on first use).
pub fn warm() {
    let _ = pool();
}

/// Compares the noise of `bytes`, read from `offset` of one of trackbench's files, with what was
/// written there (the 16-byte tags excluded: `check_tag` checks those). Returns the start of
/// the first block whose noise differs. A plain comparison with the pool, as cheap as reading
/// the bytes once.
pub fn noise_mismatch(bytes: &[u8], offset: u64) -> Option<u64> {
    let pool = pool();
    let mut done = 0usize;
    while done < bytes.len() {
        let at = offset + done as u64;
        let block_start = at / BLOCK as u64 * BLOCK as u64;
        let in_block = (at - block_start) as usize;
        let n = (BLOCK - in_block).min(bytes.len() - done);
        let skip = TAG_LEN.saturating_sub(in_block).min(n);
        let p = ((block_start / BLOCK as u64) % POOL_BLOCKS) as usize * BLOCK + in_block;
        if bytes[done + skip..done + n] != pool[p + skip..p + n] {
            return Some(block_start);
        }
        done += n;
    }
    None
}

/// Bytes of noise a one-block read's check compares.
pub const NOISE_SAMPLE: usize = 512;

/// Which bytes of a `len`-byte read the `nth` read's noise check compares, as `(start, len)` in
/// the request; the tags of every block are checked besides (`verify`). A request of several
/// blocks compares one whole block, a different one each time (all of a 1 MiB read costs a fast
/// drive's queue-depth-1 rate a quarter; one block in 256 costs nothing). A request of one block
/// (random 4K) compares one `NOISE_SAMPLE` slice of it, the next slice each time, so a run still
/// compares every byte position: the whole block cost random 4K reads at queue depth 32 about a
/// tenth of fio's rate on a virtual disk (the data arrives by DMA, every line compared is a cache
/// miss, and a completion's check delays its slot's next request; `__memcmp` was 6% of the
/// measuring thread's samples).
pub fn noise_sample(len: usize, nth: u64) -> (usize, usize) {
    let blocks = (len / BLOCK) as u64;
    if blocks > 1 {
        return ((nth % blocks) as usize * BLOCK, BLOCK);
    }
    let slices = (BLOCK / NOISE_SAMPLE) as u64;
    ((nth % slices) as usize * NOISE_SAMPLE, NOISE_SAMPLE)
}

/// What a buffer's noise was last filled for, so a refill of the same phase only restamps tags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FillState {
    phase_len: Option<(u64, usize)>,
}

/// Fills `buf` with the content that belongs at `offset` of file `file_id`.
/// `offset` and `buf.len()` must be multiples of `BLOCK`.
pub fn fill(buf: &mut [u8], file_id: u32, offset: u64, state: &mut FillState) {
    assert!(
        offset.is_multiple_of(BLOCK as u64) && buf.len().is_multiple_of(BLOCK),
        "content fill must be block aligned: offset {offset}, len {}",
        buf.len()
    );
    let key = (offset % POOL_BYTES, buf.len());
    if state.phase_len != Some(key) {
        let pool = pool();
        for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
            let p = ((offset / BLOCK as u64 + i as u64) % POOL_BLOCKS) as usize * BLOCK;
            block[TAG_LEN..].copy_from_slice(&pool[p + TAG_LEN..p + BLOCK]);
        }
        state.phase_len = Some(key);
    }
    for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
        write_tag(block, file_id, offset + (i * BLOCK) as u64);
    }
}

/// Writes the content of bytes `offset .. offset + buf.len()` of file `file_id`, for any (unaligned)
/// range: what a recorder produces one audio period at a time.
pub fn fill_range(buf: &mut [u8], file_id: u32, offset: u64) {
    let pool = pool();
    let mut tag = [0u8; TAG_LEN];
    let mut done = 0usize;
    while done < buf.len() {
        let at = offset + done as u64;
        let block_start = at / BLOCK as u64 * BLOCK as u64;
        let in_block = (at - block_start) as usize;
        let n = (BLOCK - in_block).min(buf.len() - done);
        let out = &mut buf[done..done + n];
        let p = ((block_start / BLOCK as u64) % POOL_BLOCKS) as usize * BLOCK;
        out.copy_from_slice(&pool[p + in_block..p + in_block + n]);
        if in_block < TAG_LEN {
            write_tag(&mut tag, file_id, block_start);
            let k = (TAG_LEN - in_block).min(n);
            out[..k].copy_from_slice(&tag[in_block..in_block + k]);
        }
        done += n;
    }
}

/// Checks the one tag at `block_offset` (a multiple of `BLOCK`) given its 16 bytes.
pub fn check_tag(tag: &[u8], file_id: u32, block_offset: u64) -> bool {
    tag.len() >= TAG_LEN
        && tag[0..4] == MAGIC
        && tag[4..8] == file_id.to_le_bytes()
        && tag[8..16] == block_offset.to_le_bytes()
}

fn write_tag(block: &mut [u8], file_id: u32, offset: u64) {
    block[0..4].copy_from_slice(&MAGIC);
    block[4..8].copy_from_slice(&file_id.to_le_bytes());
    block[8..16].copy_from_slice(&offset.to_le_bytes());
}

/// A block whose content is not what trackbench wrote there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub offset: u64,
    pub detail: String,
}

/// Checks the tags of every block that starts inside `buf`, which was read from `offset` of file
/// `file_id`. With `noise`, the noise of each whole block is compared too.
pub fn verify(buf: &[u8], file_id: u32, offset: u64, noise: bool) -> Result<(), Mismatch> {
    let first = offset.div_ceil(BLOCK as u64) * BLOCK as u64;
    let end = offset + buf.len() as u64;
    let mut at = first;
    while at + TAG_LEN as u64 <= end {
        let i = (at - offset) as usize;
        let block = &buf[i..buf.len().min(i + BLOCK)];
        let tag = &block[..TAG_LEN];
        if tag[0..4] != MAGIC {
            return Err(Mismatch {
                offset: at,
                detail: "no trackbench tag (the data is not what was written)".to_string(),
            });
        }
        let f = u32::from_le_bytes([tag[4], tag[5], tag[6], tag[7]]);
        let mut o = [0u8; 8];
        o.copy_from_slice(&tag[8..16]);
        let o = u64::from_le_bytes(o);
        if f != file_id || o != at {
            return Err(Mismatch {
                offset: at,
                detail: format!(
                    "tag says file {f} offset {o}, expected file {file_id} offset {at} (misplaced data)"
                ),
            });
        }
        if noise && block.len() == BLOCK {
            let p = ((at / BLOCK as u64) % POOL_BLOCKS) as usize * BLOCK;
            if block[TAG_LEN..] != pool()[p + TAG_LEN..p + BLOCK] {
                return Err(Mismatch {
                    offset: at,
                    detail: "tag is right but the noise differs (corrupted data)".to_string(),
                });
            }
        }
        at += BLOCK as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_misplacement() {
        let mut st = FillState::default();
        let mut buf = vec![0u8; 4 * BLOCK];
        fill(&mut buf, 7, 8192, &mut st);
        verify(&buf, 7, 8192, true).unwrap();
        let e = verify(&buf, 7, 12288, false).unwrap_err();
        assert_eq!(e.offset, 12288);
        assert!(verify(&buf, 8, 8192, false).is_err());
        // A sub-block read (512 B) checks only the tags it contains.
        verify(&buf[512..1024], 7, 8192 + 512, false).unwrap();
        verify(&buf[BLOCK..BLOCK + 512], 7, 8192 + BLOCK as u64, false).unwrap();
    }

    #[test]
    fn refill_same_phase_restamps_tags_only_but_is_identical() {
        let mut st = FillState::default();
        let mut a = vec![0u8; 2 * BLOCK];
        fill(&mut a, 1, 0, &mut st);
        fill(&mut a, 1, POOL_BYTES, &mut st); // same phase: only tags change
        let mut fresh = vec![0u8; 2 * BLOCK];
        fill(&mut fresh, 1, POOL_BYTES, &mut FillState::default());
        assert_eq!(a, fresh);
        fill(&mut a, 1, BLOCK as u64, &mut st); // another phase: full copy
        let mut fresh = vec![0u8; 2 * BLOCK];
        fill(&mut fresh, 1, BLOCK as u64, &mut FillState::default());
        assert_eq!(a, fresh);
    }

    #[test]
    fn unaligned_ranges_match_whole_blocks() {
        let mut whole = vec![0u8; 3 * BLOCK];
        fill(&mut whole, 5, 4096, &mut FillState::default());
        let mut pieces = vec![0u8; 3 * BLOCK];
        let mut at = 0;
        for n in [7usize, 768, 5000, 1, 3000, 3512] {
            fill_range(&mut pieces[at..at + n], 5, 4096 + at as u64);
            at += n;
        }
        assert_eq!(at, 3 * BLOCK);
        assert_eq!(whole, pieces);
        assert!(check_tag(&whole[BLOCK..], 5, 8192));
        assert!(!check_tag(&whole[BLOCK..], 5, 4096));
    }

    #[test]
    fn a_one_block_reads_check_visits_every_slice_and_a_larger_one_every_block() {
        let slices: std::collections::BTreeSet<_> =
            (0..8).map(|n| noise_sample(BLOCK, n)).collect();
        let want: std::collections::BTreeSet<_> =
            (0..8).map(|k| (k * NOISE_SAMPLE, NOISE_SAMPLE)).collect();
        assert_eq!(slices, want);
        assert_eq!(noise_sample(BLOCK, 8), (0, NOISE_SAMPLE));
        // A 1 MiB read: one whole block, each of its 256 in turn.
        assert_eq!(noise_sample(1 << 20, 0), (0, BLOCK));
        assert_eq!(noise_sample(1 << 20, 255), (255 * BLOCK, BLOCK));
        assert_eq!(noise_sample(1 << 20, 256), (0, BLOCK));
        // A slice of one block still finds corruption inside it, and only there.
        let mut b = vec![0u8; BLOCK];
        fill(&mut b, 3, 8 * BLOCK as u64, &mut FillState::default());
        b[3 * NOISE_SAMPLE + 7] ^= 1;
        let at = |(k, n): (usize, usize)| noise_mismatch(&b[k..k + n], 8 * BLOCK as u64 + k as u64);
        assert_eq!(at(noise_sample(BLOCK, 3)), Some(8 * BLOCK as u64));
        assert_eq!(at(noise_sample(BLOCK, 2)), None);
    }

    #[test]
    fn detects_corruption_and_foreign_data() {
        let mut buf = vec![0u8; BLOCK];
        fill(&mut buf, 3, 0, &mut FillState::default());
        buf[100] ^= 1;
        assert!(verify(&buf, 3, 0, false).is_ok());
        assert!(
            verify(&buf, 3, 0, true)
                .unwrap_err()
                .detail
                .contains("noise")
        );
        let zeros = vec![0u8; BLOCK];
        assert!(
            verify(&zeros, 3, 0, false)
                .unwrap_err()
                .detail
                .contains("no trackbench tag")
        );
    }

    #[test]
    fn blocks_are_unique_and_noisy() {
        let mut buf = vec![0u8; 512 * BLOCK];
        fill(&mut buf, 1, 0, &mut FillState::default());
        let a = &buf[..BLOCK];
        let b = &buf[256 * BLOCK..257 * BLOCK];
        assert_ne!(a, b, "blocks with the same noise phase still differ by tag");
        let zeros = buf.iter().filter(|&&x| x == 0).count();
        assert!(zeros < buf.len() / 100, "noise, not silence");
    }
}
