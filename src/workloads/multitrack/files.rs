//! A streaming run on real files: the memory it pins checked, the playback files laid out while
//! the rings are reserved, the record files created, the run judged, the recordings finished as
//! WAV files (and read back with `--verify`), and the record files removed.

use super::Multitrack;
use crate::audio::DATA_OFFSET;
use crate::dataset::{self, Span};
use crate::engine::StreamSpec;
use crate::engine::real_time::StreamFile;
use crate::engine::ring::{Ring, RingMemory};
use crate::error::{Error, Result};
use crate::io::driver::Limits;
use crate::io::patterns::Sequential;
use crate::io::{self, OpKind, OpenMode};
use crate::units::fmt_size;
use crate::verdict::tracks::{self as judged, StreamOutcome};
use crate::workloads::Env;
use std::sync::atomic::{AtomicBool, Ordering};

impl Multitrack {
    /// One run of `spec` on real files, judged; its files removed after it unless kept.
    pub(super) fn one_real(
        &self,
        env: &mut Env<'_>,
        spec: &StreamSpec,
        rings: &mut RingMemory,
    ) -> Result<StreamOutcome> {
        let what = format!("{:?} (it writes test files)", self.kind).to_lowercase();
        check_memory(env, spec)?;
        let play = lay_out_beside_rings(env, spec, rings, &what)?;
        let (names, rec) = record_files(env, spec, &what)?;
        let pf: Vec<_> = play.iter().map(|s| stream_file(s, s.len())).collect();
        let rec_len = crate::engine::shape::record_file_bytes(spec);
        let rf: Vec<_> = rec.iter().map(|s| stream_file(s, rec_len)).collect();
        let (outcome, written) =
            judged::run_real(spec, &pf, &rf, env.target.device.as_ref(), rings, &env.ctl)?;
        drop(pf);
        drop(rf);
        finish_recordings(spec, &rec, &written)?;
        if self.verify {
            verify_recordings(env, &rec, &written)?;
        }
        let keep = env.data.as_deref().is_some_and(|d| d.keep());
        if !keep {
            drop(rec);
            let (dd, _) = env.data_dir(&what)?;
            dd.delete_many(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        Ok(outcome)
    }
}

/// Refuses a run whose rings (and a `read_whole` profile's read buffers) would pin more memory
/// than the run may.
fn check_memory(env: &Env<'_>, spec: &StreamSpec) -> Result<()> {
    let rings_bytes = u64::from(spec.tracks()) * spec.ring_bytes();
    let butler_bytes = spec.butler_buffer_bytes();
    let mut what_pins = format!("{} rings of {}", spec.tracks(), fmt_size(spec.ring_bytes()));
    if butler_bytes > 0 {
        what_pins += &format!(
            " and the butler's {} read buffers of {}",
            spec.butler.queue_depth(),
            fmt_size(butler_bytes / spec.butler.queue_depth() as u64)
        );
    }
    env.memory.check(
        &what_pins,
        rings_bytes + butler_bytes,
        "fewer tracks, smaller rings (--buffer, --chunk) or a shallower parallel butler",
    )
}

/// Lays out the playback files while the rings are allocated and first touched (seconds of CPU
/// for thousands of tracks on a virtual machine) beside it, as the files are written back
/// (waiting on the device): the passes overlap instead of following one another. What is not
/// touched by then is touched while the run locates (`real_time::run`).
fn lay_out_beside_rings(
    env: &mut Env<'_>,
    spec: &StreamSpec,
    rings: &mut RingMemory,
    what: &str,
) -> Result<Vec<Span>> {
    let cancel = env.ctl.cancel;
    let (dd, ctl) = env.data_dir(what)?;
    let play_len = crate::engine::shape::play_file_bytes(spec);
    let ring_len = Ring::capacity_for_bytes(spec.ring_bytes(), spec.ring_slot_bytes());
    let laid_out = AtomicBool::new(false);
    let stop = || laid_out.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed);
    let (laid, reserved) = std::thread::scope(|s| {
        let r = s.spawn(|| rings.reserve_unless(spec.tracks() as usize, ring_len as usize, &stop));
        let laid = play_files(dd, spec, spec.play_tracks as usize, play_len, ctl).and_then(
            |(play, kept)| {
                if !spec.policy.direct {
                    // Start from a cold page cache, as a session opened after a while would:
                    // what was just laid out (or read by an earlier probe) is written back and
                    // dropped.
                    dataset::drop_all_cached(&play)?;
                }
                Ok((play, kept))
            },
        );
        laid_out.store(true, Ordering::Relaxed);
        (laid, r.join())
    });
    let (play, _) = laid?;
    reserved.unwrap_or_else(|p| std::panic::resume_unwind(p))?;
    Ok(play)
}

/// The record tracks' files, new and empty but for their headers (preallocated with
/// `--prealloc`): their names and spans.
fn record_files(
    env: &mut Env<'_>,
    spec: &StreamSpec,
    what: &str,
) -> Result<(Vec<String>, Vec<Span>)> {
    let (dd, _) = env.data_dir(what)?;
    let rec_len = crate::engine::shape::record_file_bytes(spec);
    let names: Vec<String> = (0..spec.record_tracks)
        .map(|i| format!("rec-{i:04}.wav"))
        .collect();
    dd.ensure_space_replacing(
        u64::from(spec.record_tracks) * (rec_len + DATA_OFFSET),
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )?;
    let items: Vec<(String, String, u64)> = names
        .iter()
        .map(|n| (n.clone(), format!("record:{n}"), DATA_OFFSET + rec_len))
        .collect();
    let registered = dd.register_many(&items)?;
    let mut rec: Vec<Span> = Vec::with_capacity(registered.len());
    for (path, id) in registered {
        let o = io::open(&path, OpenMode::ReadWrite, !spec.policy.direct)?;
        dataset::write_header(&o.file, &path, &spec.format, rec_len)?;
        if spec.prealloc {
            crate::platform::preallocate(&o.file, DATA_OFFSET + rec_len)
                .map_err(|e| Error::io(format!("cannot preallocate {}", path.display()), e))?;
        }
        rec.push(Span::media(path, o, DATA_OFFSET + rec_len, id));
    }
    Ok((names, rec))
}

/// Record files become proper WAV files of what was recorded (`written` bytes each).
fn finish_recordings(spec: &StreamSpec, rec: &[Span], written: &[u64]) -> Result<()> {
    let frame = spec.format.bytes_per_frame();
    for (s, &w) in rec.iter().zip(written) {
        let audio = w / frame * frame;
        dataset::write_header(&s.file, &s.path, &spec.format, audio)?;
        s.file
            .set_len(DATA_OFFSET + w)
            .and_then(|_| s.file.sync_all())
            .map_err(|e| Error::io(format!("cannot finish {}", s.path.display()), e))?;
    }
    Ok(())
}

/// `--verify`: every block of every recording read back and its tag checked.
fn verify_recordings(env: &mut Env<'_>, rec: &[Span], written: &[u64]) -> Result<()> {
    for (s, &w) in rec.iter().zip(written) {
        if w == 0 {
            continue;
        }
        let end = DATA_OFFSET + w / 4096 * 4096;
        let mut p = Sequential::new(OpKind::Read, 0, DATA_OFFSET, end, 1 << 20, false);
        env.drive_alone(
            &[s],
            &mut p,
            1 << 20,
            Limits::default(),
            "verifying recorded files",
        )?;
    }
    Ok(())
}

/// The playback tracks' files. Through the page cache they are laid out as a recording's takes
/// (`dataset::Layout::Takes`): a program reading a session reads files the filesystem placed
/// as it recorded them, and where a read-ahead window crosses from one extent to the next the
/// device takes two I/Os (Ardour's float takes on a 20-IOPS device: one more I/O a track in
/// the refill that ran dry, docs/lab/profiles.md). Direct-I/O files stay laid out file after file, as
/// the capped-device searches were measured on.
pub(super) fn play_files(
    dd: &mut crate::datadir::DataDir,
    spec: &StreamSpec,
    count: usize,
    play_len: u64,
    ctl: &crate::control::Control<'_>,
) -> Result<(Vec<Span>, usize)> {
    if spec.policy.direct {
        dataset::ensure_wavs(dd, "play", count, &spec.format, play_len, false, ctl)
    } else {
        dataset::ensure_takes(dd, "play", count, &spec.format, play_len, ctl)
    }
}

/// A file of ours as a track streams it: `len` bytes of audio from its data's start.
pub(crate) fn stream_file(s: &Span, len: u64) -> StreamFile<'_> {
    StreamFile {
        file: &s.file,
        path: s.path.clone(),
        content_id: s.content_id.expect("our own media"),
        data_start: s.start,
        data_len: len,
    }
}
