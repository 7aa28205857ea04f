//! Test media: real WAV files whose audio data is tagged, deterministic noise; laid out with
//! progress, listed in the data directory's manifest, and reused when a matching set is present.
//! Also the read-only view of an existing file or device as a span to measure.

use crate::audio::{self, DATA_OFFSET, Format};
use crate::control::Control;
use crate::control::ProgressUnit;
use crate::datadir::{DataDir, Identity};
use crate::error::{Error, Result};
use crate::io::driver::{DriveFile, DriveStats, Limits};
use crate::io::patterns::{FileAfterFile, Sequential};
use crate::io::{self, AlignedBuf, IoSettings, OpKind, OpenMode};
use crate::platform::FileAt;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// A byte range of one open file that a workload measures.
#[derive(Debug)]
pub struct Span {
    pub path: PathBuf,
    pub file: File,
    /// First and one-past-last byte of the measured region (4 KiB aligned).
    pub start: u64,
    pub end: u64,
    /// The tag id of trackbench's own media; `None` for a user's file or a device.
    pub content_id: Option<u32>,
    /// Figures measured on this span went through the page cache.
    pub cached: bool,
    /// O_DIRECT was wanted and refused by the filesystem.
    pub direct_refused: bool,
}

/// Advises the kernel to drop the clean cached pages of `len` bytes at `offset` (0: to the end);
/// false where the platform cannot (`platform::drop_pages`).
pub fn drop_pages(file: &File, offset: u64, len: u64) -> bool {
    crate::platform::drop_pages(file, offset, len)
}

/// Takes `file` out of the page cache: written back first (advice does not drop dirty pages),
/// then dropped.
pub fn drop_file_pages(file: &File, path: &std::path::Path) -> Result<()> {
    file.sync_data()
        .map_err(|e| Error::io(format!("cannot write back {}", path.display()), e))?;
    drop_pages(file, 0, 0);
    Ok(())
}

/// Takes a set of files out of the page cache: written back first, all together
/// (`platform::sync_files`: one device flush, not one a file; advice does not drop dirty pages),
/// then dropped, so the next reads come from the device — as a session's takes do when it opens,
/// long after they were recorded.
pub fn drop_all_cached<'a>(spans: impl IntoIterator<Item = &'a Span>) -> Result<()> {
    let spans: Vec<&Span> = spans.into_iter().collect();
    sync_spans(&spans, "write back")?;
    for s in &spans {
        drop_pages(&s.file, 0, 0);
    }
    Ok(())
}

/// `platform::sync_files` for spans, the error naming the set and what could not be done.
fn sync_spans(spans: &[&Span], what: &str) -> Result<()> {
    let files: Vec<&File> = spans.iter().map(|s| &s.file).collect();
    crate::platform::sync_files(&files).map_err(|e| {
        let first = spans
            .first()
            .map_or_else(String::new, |s| s.path.display().to_string());
        Error::io(
            format!("cannot {what} {} files ({first}, …)", spans.len()),
            e,
        )
    })
}

impl Span {
    /// One of trackbench's WAV files, opened as `o`: its audio from `DATA_OFFSET` to `end`.
    pub fn media(path: PathBuf, o: io::Opened, end: u64, content_id: u32) -> Span {
        Span {
            path,
            file: o.file,
            start: DATA_OFFSET,
            end,
            content_id: Some(content_id),
            cached: o.cached,
            direct_refused: o.direct_refused,
        }
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    pub fn drive_file(&self) -> DriveFile {
        DriveFile {
            path: self.path.clone(),
            content_id: self.content_id,
        }
    }
}

/// Opens an existing file or block device read-only and measures all of it (rounded down to
/// whole 4 KiB blocks).
pub fn existing_span(path: &std::path::Path, cached: bool) -> Result<Span> {
    let o = io::open(path, OpenMode::ReadOnly, cached)?;
    let mut f = o.file;
    let size = f
        .seek(SeekFrom::End(0))
        .map_err(|e| Error::io(format!("cannot find the size of {}", path.display()), e))?;
    Ok(Span {
        path: path.to_path_buf(),
        file: f,
        start: 0,
        end: size / 4096 * 4096,
        content_id: None,
        cached: o.cached,
        direct_refused: o.direct_refused,
    })
}

/// Writes one new WAV file of `format` with about `data_len` bytes of tagged audio, in requests of
/// `block` bytes issued as `io` says, and returns it open for reading and writing with what the
/// writing measured. With `cached`, the final fsync is part of the measured time.
#[allow(clippy::too_many_arguments)]
pub fn write_wav(
    dd: &mut DataDir,
    name: &str,
    key: &str,
    format: &Format,
    data_len: u64,
    block: u32,
    io_settings: &IoSettings,
    label: &str,
    ctl: &Control<'_>,
) -> Result<(Span, DriveStats)> {
    let data_len = check_len(format, data_len)?;
    dd.ensure_space_replacing(DATA_OFFSET + data_len, &[name])?;
    let (path, id) = dd.register(name, key, DATA_OFFSET + data_len)?;
    // A measured write: the workstations of a studio start it together.
    ctl.world.start("transfer", ctl.cancel)?;
    let (span, mut stats) = create_wav(path, id, format, data_len, block, io_settings, label, ctl)?;
    crate::io::driver::stonewall(ctl, &mut stats)?;
    dd.mark_complete(name)?;
    Ok((span, stats))
}

fn check_len(format: &Format, data_len: u64) -> Result<u64> {
    let n = audio::data_len_for(format, data_len);
    if n == 0 {
        return Err(Error::invalid(
            "size",
            data_len,
            "at least a few blocks of audio (e.g. 1M)",
        ));
    }
    Ok(n)
}

/// Writes a registered file: header, then tagged audio (`data_len` already whole frames and blocks).
#[allow(clippy::too_many_arguments)]
fn create_wav(
    path: PathBuf,
    id: u32,
    format: &Format,
    data_len: u64,
    block: u32,
    io_settings: &IoSettings,
    label: &str,
    ctl: &Control<'_>,
) -> Result<(Span, DriveStats)> {
    let file_len = DATA_OFFSET + data_len;
    let o = io::open(&path, OpenMode::ReadWrite, io_settings.cached)?;
    write_header(&o.file, &path, format, data_len)?;
    let span = Span::media(path.clone(), o, file_len, id);
    let mut stats = {
        let mut pattern = Sequential::new(OpKind::Write, 0, span.start, span.end, block, false);
        io_settings.drive(
            &[&span.file],
            &[span.drive_file()],
            block as usize,
            &mut pattern,
            Limits::default(),
            label,
            ctl,
        )?
    };
    if stats.interrupted {
        return Err(Error::Interrupted);
    }
    let t = std::time::Instant::now();
    let cpu0 = crate::stats::thread_cpu_s();
    span.file
        .sync_all()
        .map_err(|e| Error::io(format!("cannot flush {}", path.display()), e))?;
    if span.cached {
        stats.elapsed += t.elapsed();
        stats.cpu_s += crate::stats::thread_cpu_s() - cpu0;
    }
    Ok((span, stats))
}

/// (Re)writes the 4 KiB WAV header of `file` for `data_len` bytes of audio.
pub fn write_header(
    file: &File,
    path: &std::path::Path,
    format: &Format,
    data_len: u64,
) -> Result<()> {
    let mut header = AlignedBuf::new(DATA_OFFSET as usize);
    header.copy_from_slice(&audio::wav_header(format, data_len));
    file.write_all_at(&header, 0)
        .map_err(|e| Error::io(format!("cannot write the header of {}", path.display()), e))
}

/// Requests in flight while a set of files is laid out: enough to keep a device busy between
/// one file's last write and the next one's first, few enough that files stay in one piece.
const LAYOUT_QUEUE_DEPTH: u32 = 4;

/// A set laid out file after file is created in batches of this many files (or
/// [`LAYOUT_BATCH_BYTES`]), each batch created, opened and given its header while the batch
/// before it is written: creating 10,000 files took 1.6-9 s here, as long as writing them.
const LAYOUT_BATCH_FILES: usize = 256;
const LAYOUT_BATCH_BYTES: u64 = 256 << 20;

/// Creates reserved files (`reserved` as [`DataDir::reserve_many`] returned them) and writes
/// them (header, then tagged audio of `lens[i]` bytes each), 1 MiB at a time with a few
/// requests in flight, direct unless the filesystem refuses it; then flushes them all at once
/// (one journal commit for the set rather than one per file: thousands of tracks' files were
/// once laid out at a quarter of the disk's rate). Returns the identities of the files it
/// created, in order (for [`DataDir::record_created`], also when the layout failed), and
/// whether the layout succeeded.
///
/// [`Layout::FileAfterFile`] writes file after file while another thread creates the files
/// ahead of the writing. As [`Layout::Takes`], every file is created first and the audio goes
/// down in passes of `pass` bytes a file, every file's piece of a pass written and flushed
/// before the next pass: the way a recording's takes reach the disk.
fn lay_out(
    reserved: &[(PathBuf, u32)],
    format: &Format,
    lens: &[u64],
    cached: bool,
    layout: Layout,
    label: &str,
    ctl: &Control<'_>,
) -> (Vec<Identity>, Result<()>) {
    let mut created = Vec::with_capacity(reserved.len());
    let written = match layout {
        Layout::Takes(pass) => prepare(reserved, lens, format, cached, &mut created)
            .and_then(|spans| write_in_passes(&spans, pass, label, ctl)),
        Layout::FileAfterFile => {
            let (c, w) = create_while_writing(reserved, format, lens, cached, label, ctl);
            created = c;
            w
        }
    };
    (created, written)
}

/// Creates files, opens them for the layout and writes their headers; pushes each created
/// file's identity to `created` as it goes (a failure leaves those created before it there).
fn prepare(
    reserved: &[(PathBuf, u32)],
    lens: &[u64],
    format: &Format,
    cached: bool,
    created: &mut Vec<Identity>,
) -> Result<Vec<Span>> {
    let mut spans = Vec::with_capacity(reserved.len());
    for ((path, id), &data_len) in reserved.iter().zip(lens) {
        created.push(crate::datadir::create_reserved(path)?);
        let o = io::open(path, OpenMode::ReadWrite, cached)?;
        write_header(&o.file, path, format, data_len)?;
        spans.push(Span::media(path.clone(), o, DATA_OFFSET + data_len, *id));
    }
    Ok(spans)
}

fn layout_io(cached: bool) -> IoSettings {
    IoSettings {
        backend: io::BackendKind::PARALLEL,
        queue_depth: LAYOUT_QUEUE_DEPTH,
        cached,
    }
}

/// [`Layout::FileAfterFile`]: a thread prepares batch after batch ([`prepare`]) one batch ahead
/// of this one, which writes them, each a file after file, on one progress bar.
fn create_while_writing(
    reserved: &[(PathBuf, u32)],
    format: &Format,
    lens: &[u64],
    cached: bool,
    label: &str,
    ctl: &Control<'_>,
) -> (Vec<Identity>, Result<()>) {
    let mut batches = Vec::new();
    let mut from = 0;
    while from < reserved.len() {
        let mut to = from;
        let mut bytes = 0;
        while to < reserved.len() && to - from < LAYOUT_BATCH_FILES && bytes < LAYOUT_BATCH_BYTES {
            bytes += lens[to];
            to += 1;
        }
        batches.push(from..to);
        from = to;
    }
    let stop = AtomicBool::new(false);
    let cancel = ctl.cancel;
    ctl.progress
        .begin(label, lens.iter().sum(), ProgressUnit::Bytes);
    let (created, written) = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<Span>>>(1);
        let stop = &stop;
        let batches = &batches;
        let preparer = s.spawn(move || {
            let mut created = Vec::with_capacity(reserved.len());
            for r in batches {
                if stop.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                    break;
                }
                let batch = prepare(
                    &reserved[r.clone()],
                    &lens[r.clone()],
                    format,
                    cached,
                    &mut created,
                );
                let failed = batch.is_err();
                if tx.send(batch).is_err() || failed {
                    break;
                }
            }
            created
        });
        let written = write_batches(rx, reserved.len(), label, ctl);
        // A failed write stops the preparer at its next batch (or its blocked hand-over).
        stop.store(true, Ordering::Relaxed);
        let created = preparer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (created, written)
    });
    ctl.progress.end();
    (created, written)
}

/// The writing half of [`create_while_writing`]: `count` files' batches as they come, then all
/// of them flushed at once.
fn write_batches(
    rx: std::sync::mpsc::Receiver<Result<Vec<Span>>>,
    count: usize,
    label: &str,
    ctl: &Control<'_>,
) -> Result<()> {
    let mut spans: Vec<Span> = Vec::with_capacity(count);
    let mut base = 0;
    for batch in rx {
        let batch = batch?;
        let ranges: Vec<(u64, u64)> = batch.iter().map(|s| (s.start, s.end)).collect();
        let bytes = ranges.iter().map(|(a, b)| b - a).sum();
        let progress = Shifted {
            to: ctl.progress,
            by: base,
        };
        let batch_ctl = Control {
            progress: &progress,
            ..*ctl
        };
        write_ranges(&batch, ranges, bytes, label, &batch_ctl)?;
        base += bytes;
        spans.extend(batch);
    }
    if spans.len() < count {
        // The preparer stopped without an error of its own: the run was interrupted.
        return Err(Error::Interrupted);
    }
    // Written back together: one device flush, not one a file (`platform::sync_files`).
    sync_spans(&spans.iter().collect::<Vec<_>>(), "flush")
}

/// Progress of one part of a longer task, shown on the whole task's bar: positions moved on by
/// what the parts before it did; the bar itself begins and ends with the task.
struct Shifted<'a> {
    to: &'a dyn crate::control::Progress,
    by: u64,
}

impl crate::control::Progress for Shifted<'_> {
    fn begin(&self, _: &str, _: u64, _: ProgressUnit) {}
    fn set(&self, position: u64) {
        self.to.set(self.by + position);
    }
    fn end(&self) {}
}

/// Writes `ranges` of `spans` (one range a span, `bytes` in all) file after file.
fn write_ranges(
    spans: &[Span],
    ranges: Vec<(u64, u64)>,
    bytes: u64,
    label: &str,
    ctl: &Control<'_>,
) -> Result<()> {
    let cached = spans.first().is_some_and(|s| s.cached);
    let files: Vec<&File> = spans.iter().map(|s| &s.file).collect();
    let drive_files: Vec<DriveFile> = spans.iter().map(Span::drive_file).collect();
    let mut pattern = FileAfterFile::new(OpKind::Write, ranges, 1 << 20);
    let limits = Limits {
        bytes: Some(bytes),
        duration: None,
    };
    let stats = layout_io(cached).drive(
        &files,
        &drive_files,
        1 << 20,
        &mut pattern,
        limits,
        label,
        ctl,
    )?;
    if stats.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// [`Layout::Takes`]: every file's next `pass` bytes, flushed, pass after pass.
fn write_in_passes(spans: &[Span], pass: u64, label: &str, ctl: &Control<'_>) -> Result<()> {
    let pass = pass.max(1 << 20).next_multiple_of(4096);
    let longest = spans.iter().map(|s| s.end - s.start).max().unwrap_or(0);
    let mut from = 0u64;
    while from < longest {
        let to = from.saturating_add(pass);
        let ranges: Vec<(u64, u64)> = spans
            .iter()
            .map(|s| {
                let a = s.start.saturating_add(from).min(s.end);
                (a, s.start.saturating_add(to).min(s.end))
            })
            .collect();
        let bytes = ranges.iter().map(|(a, b)| b - a).sum();
        write_ranges(spans, ranges.clone(), bytes, label, ctl)?;
        // Flushed between passes, as writeback takes a capture's pages; the last pass is
        // flushed with the rest below.
        if to < longest {
            let written: Vec<&Span> = spans
                .iter()
                .zip(&ranges)
                .filter(|(_, (a, b))| a < b)
                .map(|(s, _)| s)
                .collect();
            sync_spans(&written, "flush")?;
        }
        from = to;
    }
    sync_spans(&spans.iter().collect::<Vec<_>>(), "flush")
}

/// How a set of files is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One after another, each in one piece: files copied or installed (a sample library).
    FileAfterFile,
    /// As a recording writes its takes: every file's next `pass` bytes, then all of them
    /// flushed, pass after pass. A capture's dirty pages reach the disk when the kernel's
    /// writeback takes them, after about [`TAKE_FLUSH_S`] of audio a track, and the filesystem
    /// allocates them then: on ext4 that put Ardour's takes in 8 MiB extents far apart, and
    /// these passes do the same; written and flushed at once, a file comes out in one piece.
    Takes(u64),
}

/// Seconds of audio a track's take holds before the kernel writes it back during a recording:
/// Linux's `vm.dirty_expire_centisecs`, 3000 by default (Documentation/admin-guide/sysctl/vm.rst).
pub const TAKE_FLUSH_S: f64 = 30.0;

/// Makes sure files `prefix-0000.wav` … for `count` tracks exist under the data directory, each
/// with `data_len` bytes of `format` audio, reusing matching files already there (from this run's
/// earlier steps or an earlier `--keep` run) and laying out the rest. Opens them for reading and
/// writing, through the page cache when `cached`. Returns the spans and how many were reused.
pub fn ensure_wavs(
    dd: &mut DataDir,
    prefix: &str,
    count: usize,
    format: &Format,
    data_len: u64,
    cached: bool,
    ctl: &Control<'_>,
) -> Result<(Vec<Span>, usize)> {
    let data_len = check_len(format, data_len)?;
    ensure_wav_set(dd, prefix, &vec![data_len; count], format, cached, ctl)
}

/// `ensure_wavs` for a session's tracks through the page cache: the files it lays out are
/// written as a recording writes its takes ([`Layout::Takes`], a pass being [`TAKE_FLUSH_S`] of
/// `format`), so that the filesystem places them as it places a recorded session's.
pub fn ensure_takes(
    dd: &mut DataDir,
    prefix: &str,
    count: usize,
    format: &Format,
    data_len: u64,
    ctl: &Control<'_>,
) -> Result<(Vec<Span>, usize)> {
    let data_len = check_len(format, data_len)?;
    let pass = (TAKE_FLUSH_S * format.bytes_per_second() as f64) as u64;
    let lens = vec![data_len; count];
    ensure_laid_out(dd, prefix, &lens, format, true, Layout::Takes(pass), ctl)
}

/// `ensure_wavs` for files of their own lengths: `prefix-0000.wav` … with `lens[i]` bytes of
/// audio each (whole frames and blocks), as a sample library's are.
pub fn ensure_wav_set(
    dd: &mut DataDir,
    prefix: &str,
    lens: &[u64],
    format: &Format,
    cached: bool,
    ctl: &Control<'_>,
) -> Result<(Vec<Span>, usize)> {
    ensure_laid_out(dd, prefix, lens, format, cached, Layout::FileAfterFile, ctl)
}

fn ensure_laid_out(
    dd: &mut DataDir,
    prefix: &str,
    lens: &[u64],
    format: &Format,
    cached: bool,
    layout: Layout,
    ctl: &Control<'_>,
) -> Result<(Vec<Span>, usize)> {
    let lens: Vec<u64> = lens
        .iter()
        .map(|&l| check_len(format, l))
        .collect::<Result<_>>()?;
    let keys: Vec<String> = (0..lens.len())
        .map(|i| format!("{prefix}:{i}:{}:{format}", lens[i]))
        .collect();
    let name = |i: usize| format!("{prefix}-{i:04}.wav");
    let missing: Vec<usize> = dd
        .find_many(&keys)
        .into_iter()
        .enumerate()
        .filter(|&(i, e)| e.is_none_or(|e| e.name != name(i)))
        .map(|(i, _)| i)
        .collect();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|&i| name(i)).collect();
        let missing_lens: Vec<u64> = missing.iter().map(|&i| lens[i]).collect();
        dd.ensure_space_replacing(
            missing_lens.iter().map(|l| DATA_OFFSET + l).sum(),
            &names.iter().map(String::as_str).collect::<Vec<_>>(),
        )?;
        let items: Vec<(String, String, u64)> = missing
            .iter()
            .map(|&i| (name(i), keys[i].clone(), DATA_OFFSET + lens[i]))
            .collect();
        let reserved = dd.reserve_many(&items)?;
        let label = if missing.len() == 1 {
            format!("laying out {}", name(missing[0]))
        } else {
            format!("laying out {} files", missing.len())
        };
        let (created, laid) = lay_out(
            &reserved,
            format,
            &missing_lens,
            cached,
            layout,
            &label,
            ctl,
        );
        dd.record_created(&reserved, &created)?;
        laid?;
        dd.mark_complete_many(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
    }
    let mut spans = Vec::with_capacity(lens.len());
    for e in dd.find_many(&keys) {
        let e = e.expect("every file is present now");
        let path = dd.root().join(&e.name);
        let o = io::open(&path, OpenMode::ReadWrite, cached)?;
        spans.push(Span::media(path, o, e.size_bytes, e.content_id));
    }
    Ok((spans, lens.len() - missing.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn wav_files_are_readable_by_an_audio_library_and_reused() {
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let ctl = Control::quiet(&cancel);
        let mut dd = DataDir::open(t.path(), true).unwrap();
        let fmt = Format::parse("44.1k/16/stereo").unwrap();
        let (spans, reused) = ensure_wavs(&mut dd, "set", 2, &fmt, 300_000, false, &ctl).unwrap();
        assert_eq!(reused, 0);
        assert_eq!(spans.len(), 2);
        let r = hound::WavReader::open(&spans[0].path).unwrap();
        let spec = r.spec();
        assert_eq!(
            (spec.sample_rate, spec.channels, spec.bits_per_sample),
            (44_100, 2, 16)
        );
        assert_eq!(u64::from(r.len()) * 2, spans[0].len());
        // The data is noise, not silence.
        let samples: Vec<i16> = r
            .into_samples::<i16>()
            .take(1000)
            .map(|s| s.unwrap())
            .collect();
        assert!(samples.iter().filter(|&&s| s != 0).count() > 900);
        drop(spans);
        dd.close().unwrap();

        let mut dd = DataDir::open(t.path(), false).unwrap();
        let (spans, reused) = ensure_wavs(&mut dd, "set", 3, &fmt, 300_000, false, &ctl).unwrap();
        assert_eq!(
            reused, 2,
            "a larger set reuses the files it shares with a smaller one"
        );
        assert_eq!(spans.len(), 3);
        let mut buf = vec![0u8; 8192];
        spans[1].file.read_exact_at(&mut buf, DATA_OFFSET).ok();
        drop(spans);
        dd.close().unwrap();
        assert!(!t.path().join(crate::datadir::DIR_NAME).exists());
    }

    #[test]
    fn takes_are_laid_out_pass_by_pass_with_every_byte_in_place() {
        // 44.1k 16-bit mono: a pass is 30 s, 2.6 MB, so files of 6.5 MB go down in three
        // passes, the last one short.
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let ctl = Control::quiet(&cancel);
        let mut dd = DataDir::open(t.path(), false).unwrap();
        let fmt = Format::parse("44.1k/16/mono").unwrap();
        let len = 6_500_000u64.next_multiple_of(4096);
        let (spans, reused) = ensure_takes(&mut dd, "take", 3, &fmt, len, &ctl).unwrap();
        assert_eq!((spans.len(), reused), (3, 0));
        for s in &spans {
            assert_eq!(s.len(), len);
            assert_eq!(s.file.metadata().unwrap().len(), DATA_OFFSET + len);
            let mut buf = vec![0u8; len as usize];
            s.file.read_exact_at(&mut buf, s.start).unwrap();
            crate::content::verify(&buf, s.content_id.unwrap(), s.start, true).unwrap();
            let r = hound::WavReader::open(&s.path).unwrap();
            assert_eq!(u64::from(r.len()) * 2, len);
        }
        drop(spans);
        // Reused as any other set: the manifest does not care how they were written.
        let (_, reused) = ensure_takes(&mut dd, "take", 3, &fmt, len, &ctl).unwrap();
        assert_eq!(reused, 3);
        dd.close().unwrap();
    }

    /// Positions a progress bar was given, with its begin and end.
    #[derive(Default)]
    struct Recorded(std::sync::Mutex<Vec<String>>);

    impl crate::control::Progress for Recorded {
        fn begin(&self, label: &str, total: u64, _: ProgressUnit) {
            self.0
                .lock()
                .unwrap()
                .push(format!("begin {label} {total}"));
        }
        fn set(&self, position: u64) {
            self.0.lock().unwrap().push(position.to_string());
        }
        fn end(&self) {
            self.0.lock().unwrap().push("end".into());
        }
    }

    #[test]
    fn files_are_created_a_batch_ahead_of_their_writing_with_every_byte_in_place() {
        // More files than three batches: each batch is created, opened and headed while the
        // one before it is written, all of it on one bar that only moves forward.
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let progress = Recorded::default();
        let ctl = Control {
            cancel: &cancel,
            progress: &progress,
            world: &crate::studio::Alone,
        };
        let mut dd = DataDir::open(t.path(), false).unwrap();
        let fmt = Format::parse("48k/24/mono").unwrap();
        let count = 2 * LAYOUT_BATCH_FILES + 7;
        let len = 3 * 4096u64;
        let (spans, reused) = ensure_wavs(&mut dd, "many", count, &fmt, len, false, &ctl).unwrap();
        assert_eq!((spans.len(), reused), (count, 0));
        for s in &spans {
            let mut buf = AlignedBuf::new(len as usize);
            s.file.read_exact_at(&mut buf, s.start).unwrap();
            crate::content::verify(&buf, s.content_id.unwrap(), s.start, true).unwrap();
            let r = hound::WavReader::open(&s.path).unwrap();
            assert_eq!(u64::from(r.len()) * 3, len);
        }
        let seen = progress.0.lock().unwrap().clone();
        let total = count as u64 * len;
        assert_eq!(
            seen.first().unwrap(),
            &format!("begin laying out {count} files {total}")
        );
        assert_eq!(seen.last().unwrap(), "end");
        assert_eq!(seen.iter().filter(|l| l.starts_with("begin")).count(), 1);
        let positions: Vec<u64> = seen[1..seen.len() - 1]
            .iter()
            .map(|p| p.parse().unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] <= w[1]), "{positions:?}");
        assert!(positions.iter().all(|&p| p <= total), "{positions:?}");
        drop(spans);
        // Every file's identity is recorded: reused as any other set, and cleaned up.
        let (_, reused) = ensure_wavs(&mut dd, "many", count, &fmt, len, false, &ctl).unwrap();
        assert_eq!(reused, count);
        dd.close().unwrap();
        assert!(!t.path().join(crate::datadir::DIR_NAME).exists());
    }

    #[test]
    fn a_file_in_the_way_of_a_later_batch_stops_the_layout_and_is_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let ctl = Control::quiet(&cancel);
        let mut dd = DataDir::open(t.path(), false).unwrap();
        let in_the_way = dd
            .root()
            .join(format!("many-{:04}.wav", LAYOUT_BATCH_FILES + 3));
        std::fs::write(&in_the_way, b"someone else's").unwrap();
        let fmt = Format::parse("48k/24/mono").unwrap();
        let count = 2 * LAYOUT_BATCH_FILES;
        let err = ensure_wavs(&mut dd, "many", count, &fmt, 3 * 4096, false, &ctl).unwrap_err();
        assert!(
            matches!(&err, Error::BadTarget { path, .. } if *path == in_the_way),
            "{err}"
        );
        // The files created before it are trackbench's and go with the cleanup; it stays.
        dd.close().unwrap();
        assert_eq!(std::fs::read(&in_the_way).unwrap(), b"someone else's");
        let left: Vec<_> = std::fs::read_dir(in_the_way.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [in_the_way.file_name().unwrap()], "{left:?}");
    }

    /// Interrupts the run at the first position a bar is given.
    struct InterruptAtFirstStep<'a>(&'a AtomicBool);

    impl crate::control::Progress for InterruptAtFirstStep<'_> {
        fn begin(&self, _: &str, _: u64, _: ProgressUnit) {}
        fn set(&self, _: u64) {
            self.0.store(true, Ordering::Relaxed);
        }
        fn end(&self) {}
    }

    #[test]
    fn an_interrupted_layout_leaves_no_file_behind() {
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let progress = InterruptAtFirstStep(&cancel);
        let ctl = Control {
            cancel: &cancel,
            progress: &progress,
            world: &crate::studio::Alone,
        };
        let mut dd = DataDir::open(t.path(), false).unwrap();
        let fmt = Format::parse("48k/24/mono").unwrap();
        let count = 3 * LAYOUT_BATCH_FILES;
        let err = ensure_wavs(&mut dd, "many", count, &fmt, 3 << 20, false, &ctl).unwrap_err();
        assert!(matches!(err, Error::Interrupted), "{err}");
        dd.close().unwrap();
        assert!(!t.path().join(crate::datadir::DIR_NAME).exists());
    }

    /// Pages of `file` in the page cache: `cachestat` (Linux 6.5), which maps nothing; else
    /// mincore over a mapping of it. A mapping made while another test of this process holds
    /// `mlockall(MCL_FUTURE)` (a real run's audio thread, the memory lock's own test) is
    /// populated and locked, and locked pages cannot be dropped: the check once found a file's
    /// pages still cached after it had mapped them beside such a test.
    #[cfg(target_os = "linux")]
    fn resident_pages(file: &File, len: usize) -> usize {
        use std::os::fd::AsRawFd;
        #[repr(C)]
        struct Range {
            off: u64,
            len: u64,
        }
        #[repr(C)]
        #[derive(Default)]
        struct Stat {
            cache: u64,
            dirty: u64,
            writeback: u64,
            evicted: u64,
            recently_evicted: u64,
        }
        /// cachestat(2): the same number on every architecture.
        const SYS_CACHESTAT: libc::c_long = 451;
        let range = Range {
            off: 0,
            len: len as u64,
        };
        let mut stat = Stat::default();
        // SAFETY: the two structs are the kernel's layouts and live through the call.
        let r = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                file.as_raw_fd(),
                &range as *const Range,
                &mut stat as *mut Stat,
                0u32,
            )
        };
        if r == 0 {
            return stat.cache as usize;
        }
        let page = 4096;
        let pages = len.div_ceil(page);
        let mut vec = vec![0u8; pages];
        // SAFETY: a shared read-only mapping of an open file, unmapped before returning; mincore
        // fills one byte a page of it.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
            libc::munmap(p, len);
        }
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }

    /// Files written through the page cache are written back together and leave it: a few file
    /// by file, a set as large as `SYNC_WHOLE_FILESYSTEM_FROM` with one `syncfs`.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_set_of_files_is_written_back_and_dropped_at_once() {
        for count in [3, crate::platform::SYNC_WHOLE_FILESYSTEM_FROM] {
            written_back_and_dropped(count);
        }
    }

    #[cfg(target_os = "linux")]
    fn written_back_and_dropped(count: usize) {
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let ctl = Control::quiet(&cancel);
        let mut dd = DataDir::open(t.path(), false).unwrap();
        let fmt = Format::parse("48k/24/mono").unwrap();
        let (spans, _) = ensure_wavs(&mut dd, "set", count, &fmt, 64 << 10, true, &ctl).unwrap();
        for s in &spans {
            let whole = s.end as usize;
            // Read back and dirtied again through the cache: resident and dirty.
            let mut buf = vec![0u8; whole];
            s.file.read_exact_at(&mut buf, 0).unwrap();
            let first = DATA_OFFSET as usize;
            s.file
                .write_all_at(&buf[first..first + 4096], DATA_OFFSET)
                .unwrap();
            assert!(resident_pages(&s.file, whole) > 0);
        }
        drop_all_cached(&spans).unwrap();
        for s in &spans {
            assert_eq!(
                resident_pages(&s.file, s.end as usize),
                0,
                "{}",
                s.path.display()
            );
            let mut buf = vec![0u8; s.len() as usize];
            s.file.read_exact_at(&mut buf, DATA_OFFSET).unwrap();
            crate::content::verify(&buf, s.content_id.unwrap(), DATA_OFFSET, true).unwrap();
        }
        drop(spans);
        dd.close().unwrap();
    }

    #[test]
    fn float_and_multichannel_headers_are_readable() {
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(false);
        let ctl = Control::quiet(&cancel);
        let mut dd = DataDir::open(t.path(), false).unwrap();
        for (i, f) in ["48k/32f/mono", "96k/24/6"].iter().enumerate() {
            let fmt = Format::parse(f).unwrap();
            let (spans, _) =
                ensure_wavs(&mut dd, &format!("f{i}"), 1, &fmt, 200_000, false, &ctl).unwrap();
            let r = hound::WavReader::open(&spans[0].path).unwrap();
            assert_eq!(u32::from(r.spec().channels), u32::from(fmt.channels));
            assert_eq!(r.spec().sample_rate, fmt.rate_hz);
            assert_eq!(u64::from(r.len()) * u64::from(fmt.bits / 8), spans[0].len());
        }
        dd.close().unwrap();
    }
}
