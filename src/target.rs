//! What is being measured: a directory, a file or a block device, and what can be learnt about it
//! (filesystem, mount options, backing device, its model, rotational flag, scheduler, space).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// The kind of target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// trackbench may write its own files inside it.
    Directory,
    /// An existing file: read-only tests on its contents.
    File,
    /// A raw device: read-only tests only, never written.
    BlockDevice,
}

impl TargetKind {
    pub fn describe(&self) -> &'static str {
        match self {
            TargetKind::Directory => "directory",
            TargetKind::File => "file trackbench did not create",
            TargetKind::BlockDevice => "block device",
        }
    }
}

/// The physical device behind a target, as sysfs describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name of the whole disk (`sda`, `nvme0n1`, `vda`, `loop0`).
    pub name: String,
    /// The partition or mapping the target sits on, when not the whole disk.
    pub partition: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub logical_block_bytes: Option<u64>,
    pub size_bytes: Option<u64>,
    /// The drive's serial number and World Wide Name, where the system gives them: what tells
    /// this disk from another of the same model across runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
}

impl DeviceInfo {
    /// Bytes the kernel has read from the target's partition (or whole disk) since boot, from
    /// its block-layer counters (`/sys/class/block/NAME/stat`, sectors of 512 bytes): what the
    /// device itself delivered, read-ahead included, whatever the page cache made of it.
    pub fn bytes_read(&self) -> Option<u64> {
        let name = self.partition.as_deref().unwrap_or(&self.name);
        let stat = std::fs::read_to_string(format!("/sys/class/block/{name}/stat")).ok()?;
        let sectors: u64 = stat.split_whitespace().nth(2)?.parse().ok()?;
        Some(sectors * 512)
    }

    /// The kernel's read-ahead for the disk, in bytes (`/sys/class/block/NAME/queue/read_ahead_kb`;
    /// a partition reads ahead as its disk does); None where the platform does not say.
    pub fn read_ahead_bytes(&self) -> Option<u64> {
        let kb = std::fs::read_to_string(format!(
            "/sys/class/block/{}/queue/read_ahead_kb",
            self.name
        ))
        .ok()?;
        kb.trim().parse::<u64>().ok().map(|kb| kb << 10)
    }
}

fn lossy_path<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

fn lossy_opt_path<S: serde::Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => lossy_path(p, s),
        None => s.serialize_none(),
    }
}

/// Everything recorded about a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Written lossily where it is not UTF-8 (JSON strings are).
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    pub kind: TargetKind,
    pub fs_type: Option<String>,
    #[serde(serialize_with = "lossy_opt_path")]
    pub mount_point: Option<PathBuf>,
    pub mount_options: Option<String>,
    /// What the mount table names as the source (`/dev/sda1`, `tmpfs`, a server path).
    pub mount_source: Option<String>,
    pub device: Option<DeviceInfo>,
    /// Filesystem size and space available to trackbench (directories and files).
    pub total_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
    /// Size of a file or device target.
    pub size_bytes: Option<u64>,
    /// The filesystem's UUID, where the system names it (`/dev/disk/by-uuid`): the same
    /// filesystem under another mount point is the same disk's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_uuid: Option<String>,
    /// What the drive said of its health when the run started (`smartctl`), or why it could
    /// not say; None where it was not asked (a simulated device, a document from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<crate::health::Health>,
    /// The simulated device every workload ran against (`--device-model`, by its name:
    /// `bw=200M,lat=2ms`); the folder's own disk is then not what was measured, and is not
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated: Option<String>,
}

impl TargetInfo {
    /// The network share the target is on, in words ("the network share
    /// root@nas:/audio (fuse.sshfs, mounted at /mnt/nas)"), or None for a local filesystem.
    pub fn network_share(&self) -> Option<String> {
        let fs = self.fs_type.as_deref()?;
        // Linux's and macOS's names for network filesystems, and FUSE clients of remote
        // storage.
        let network = matches!(
            fs,
            "nfs"
                | "nfs4"
                | "cifs"
                | "smb3"
                | "smbfs"
                | "9p"
                | "afpfs"
                | "webdav"
                | "davfs"
                | "fuse.rclone"
                | "fuse.s3fs"
                | "fuse.gcsfuse"
        ) || fs.starts_with("fuse.sshfs");
        if !network {
            return None;
        }
        let source = self.mount_source.as_deref().unwrap_or("?");
        Some(match &self.mount_point {
            Some(m) => format!(
                "the network share {source} ({fs}, mounted at {})",
                m.display()
            ),
            None => format!("the network share {source} ({fs})"),
        })
    }

    /// The target as a run against the simulated device `name` records it: the folder given,
    /// and the device, none of the folder's disk.
    pub fn simulated(self, name: &str) -> TargetInfo {
        TargetInfo {
            simulated: Some(name.to_string()),
            ..TargetInfo::bare(self.path, self.kind)
        }
    }

    /// A target of `kind` at `path` with nothing yet known of where it lives.
    pub fn bare(path: PathBuf, kind: TargetKind) -> TargetInfo {
        TargetInfo {
            path,
            kind,
            fs_type: None,
            mount_point: None,
            mount_options: None,
            mount_source: None,
            device: None,
            total_bytes: None,
            free_bytes: None,
            size_bytes: None,
            fs_uuid: None,
            health: None,
            simulated: None,
        }
    }
}

/// Looks at `path` and records what it is. Fails with a clear message when it does not exist or
/// is neither a directory, a regular file nor a block device.
pub fn inspect(path: &Path) -> Result<TargetInfo> {
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_path_buf(),
        },
        _ => Error::io(format!("cannot examine {}", path.display()), e),
    })?;
    let canon = plain(fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    let ft = meta.file_type();
    let kind = if ft.is_dir() {
        TargetKind::Directory
    } else if ft.is_file() {
        TargetKind::File
    } else if is_block_device(&ft) {
        TargetKind::BlockDevice
    } else {
        return Err(Error::BadTarget {
            path: path.to_path_buf(),
            reason: "not a directory, a regular file or a block device".to_string(),
        });
    };
    let mut info = TargetInfo::bare(canon.clone(), kind);
    match kind {
        TargetKind::BlockDevice => {
            info.device = block_device(&meta);
            info.size_bytes = info.device.as_ref().and_then(|d| d.size_bytes);
        }
        _ => {
            describe_filesystem(&canon, &meta, &mut info);
            if let Some((total, free)) = space(&canon) {
                info.total_bytes = Some(total);
                info.free_bytes = Some(free);
            }
            if kind == TargetKind::File {
                info.size_bytes = Some(meta.len());
            }
        }
    }
    Ok(info)
}

/// Windows: a canonical path without its verbatim prefix where it names a drive
/// (`\\?\C:\Audio`, as canonicalize returns it, reads `C:\Audio`); elsewhere unchanged.
fn plain(p: PathBuf) -> PathBuf {
    #[cfg(windows)]
    {
        let s = p.to_string_lossy();
        if let Some(rest) = s.strip_prefix(r"\\?\") {
            let b = rest.as_bytes();
            if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
                return PathBuf::from(rest);
            }
        }
    }
    p
}

fn is_block_device(ft: &fs::FileType) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileTypeExt::is_block_device(ft)
    }
    #[cfg(not(unix))]
    {
        let _ = ft;
        false
    }
}

/// The device of a block-device target (Linux: from sysfs; unknown elsewhere).
fn block_device(meta: &fs::Metadata) -> Option<DeviceInfo> {
    #[cfg(target_os = "linux")]
    {
        let rdev = std::os::unix::fs::MetadataExt::rdev(meta);
        device_info(libc::major(rdev), libc::minor(rdev))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = meta;
        None
    }
}

/// The UUID of the filesystem on device `major:minor`, where udev names it in
/// `/dev/disk/by-uuid` (a machine without udev names none).
#[cfg(target_os = "linux")]
fn fs_uuid(major: u32, minor: u32) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    fs::read_dir("/dev/disk/by-uuid")
        .ok()?
        .flatten()
        .find_map(|e| {
            let rdev = fs::metadata(e.path()).ok()?.rdev();
            (libc::major(rdev) == major && libc::minor(rdev) == minor)
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
}

/// What the target's drive says of its health (`smartctl` on its whole disk), for a result to
/// keep beside its figures; not available, with the reason, where it cannot be read.
pub fn health_of(t: &TargetInfo) -> crate::health::Health {
    let timeout = std::time::Duration::from_secs(15);
    match &t.device {
        Some(d) if cfg!(unix) => crate::health::read(&Path::new("/dev").join(&d.name), timeout),
        Some(_) => crate::health::Health {
            unavailable: Some("smartctl is not asked on this system yet".into()),
            ..Default::default()
        },
        None => crate::health::Health {
            unavailable: Some(format!(
                "{} is on no local drive trackbench can name",
                t.path.display()
            )),
            ..Default::default()
        },
    }
}

/// The filesystem's type from statfs, where /proc/self/mountinfo does not say (a root without
/// /proc): the kinds whose results read differently (memory, network, FUSE) and the common
/// disk filesystems, by their magic numbers.
#[cfg(target_os = "linux")]
fn linux_fs_type(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a plain C struct; all-zero is valid, and statfs fills it.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string and s a valid out-pointer.
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let name = match s.f_type as u64 {
        0x0102_1994 => "tmpfs",
        0x8584_58f6 => "ramfs",
        0xEF53 => "ext2/3/4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x6969 => "nfs",
        0x6573_5546 => "fuse",
        0xFF53_4D42 => "cifs",
        0xFE53_4D42 => "smb3",
        0x794c_7630 => "overlay",
        0x2fc1_2fc1 => "zfs",
        0xF2F5_2010 => "f2fs",
        _ => return None,
    };
    Some(name.to_string())
}

/// The filesystem, mount and device holding a directory or file on device `dev`: Linux from
/// /proc/self/mountinfo and sysfs; macOS from statfs (type, mount point, source; the device's
/// model and kind stay unknown); Windows the volume's filesystem name and root.
fn describe_filesystem(path: &Path, meta: &fs::Metadata, info: &mut TargetInfo) {
    #[cfg(target_os = "linux")]
    {
        let dev = std::os::unix::fs::MetadataExt::dev(meta);
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        info.fs_uuid = fs_uuid(major, minor);
        match find_mount(path, major, minor) {
            Some(m) => {
                info.fs_type = Some(m.fs_type);
                info.mount_point = Some(m.mount_point);
                info.mount_options = Some(m.options);
                info.mount_source = Some(m.source);
            }
            None => info.fs_type = linux_fs_type(path),
        }
        info.device = device_info(major, minor);
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::ffi::OsStrExt;
        let _ = meta;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return;
        };
        // SAFETY: a plain C struct; all-zero is valid, and statfs fills it.
        let mut s: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: c is a valid C string and s a valid out-pointer.
        if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
            return;
        }
        let text = |f: &[libc::c_char]| {
            let bytes: Vec<u8> = f
                .iter()
                .take_while(|&&b| b != 0)
                .map(|&b| b as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        info.fs_type = Some(text(&s.f_fstypename));
        info.mount_point = Some(PathBuf::from(text(&s.f_mntonname)));
        let source = text(&s.f_mntfromname);
        info.device = macos_device(&source);
        info.mount_source = Some(source);
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Storage::FileSystem::{GetVolumeInformationW, GetVolumePathNameW};
        let _ = meta;
        let wide = wide(path);
        let mut root = [0u16; 1024];
        // SAFETY: a NUL-terminated path and a buffer of the length given.
        if unsafe { GetVolumePathNameW(wide.as_ptr(), root.as_mut_ptr(), root.len() as u32) } == 0 {
            return;
        }
        let mut fs_name = [0u16; 64];
        // SAFETY: the root from above (NUL-terminated) and buffers of the lengths given; the
        // fields not asked for are null.
        let ok = unsafe {
            GetVolumeInformationW(
                root.as_ptr(),
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                fs_name.as_mut_ptr(),
                fs_name.len() as u32,
            )
        };
        let text = |w: &[u16]| {
            String::from_utf16_lossy(&w[..w.iter().position(|&c| c == 0).unwrap_or(w.len())])
        };
        if ok != 0 {
            info.fs_type = Some(text(&fs_name));
        }
        let root = text(&root);
        info.device = windows_device(&root);
        info.mount_point = Some(PathBuf::from(root));
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        let _ = (path, meta, info);
    }
}

/// The disk behind a macOS mount source (`/dev/disk3s1s1`), from `diskutil info -plist`: its
/// media name and whether it is solid state; None where diskutil says nothing.
#[cfg(target_os = "macos")]
fn macos_device(source: &str) -> Option<DeviceInfo> {
    let name = source.strip_prefix("/dev/")?;
    let out = std::process::Command::new("diskutil")
        .args(["info", "-plist", source])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let plist = String::from_utf8_lossy(&out.stdout);
    // The element after `<key>KEY</key>`: `<string>...</string>`, `<true/>` or `<false/>`.
    let value = |key: &str| -> Option<String> {
        let rest = &plist[plist.find(&format!("<key>{key}</key>"))? + key.len() + 11..];
        let rest = rest.trim_start();
        if let Some(v) = rest.strip_prefix("<string>") {
            return Some(v[..v.find("</string>")?].trim().to_string());
        }
        rest.starts_with("<true/>")
            .then(|| "true".to_string())
            .or_else(|| rest.starts_with("<false/>").then(|| "false".to_string()))
    };
    Some(DeviceInfo {
        name: name.to_string(),
        partition: None,
        model: value("MediaName").filter(|m| !m.is_empty()),
        rotational: value("SolidState").map(|v| v == "false"),
        scheduler: None,
        logical_block_bytes: value("DeviceBlockSize").and_then(|v| v.parse().ok()),
        size_bytes: value("TotalSize").and_then(|v| v.parse().ok()),
        serial: None,
        wwn: None,
    })
}

/// The disk behind a Windows volume root (`C:\`), from the storage stack
/// (IOCTL_STORAGE_QUERY_PROPERTY on `\\.\C:`, which needs no administrator): its vendor and
/// product, and whether it incurs a seek penalty (rotational). None where the volume is not a
/// drive letter or the query is refused.
#[cfg(windows)]
fn windows_device(root: &str) -> Option<DeviceInfo> {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
    };
    use windows_sys::Win32::System::IO::DeviceIoControl;
    use windows_sys::Win32::System::Ioctl::{
        DEVICE_SEEK_PENALTY_DESCRIPTOR, IOCTL_STORAGE_QUERY_PROPERTY, PropertyStandardQuery,
        STORAGE_DEVICE_DESCRIPTOR, STORAGE_PROPERTY_QUERY, StorageDeviceProperty,
        StorageDeviceSeekPenaltyProperty,
    };
    let drive = root.strip_prefix(r"\\?\").unwrap_or(root);
    let letter = drive.get(..2).filter(|d| d.as_bytes()[1] == b':')?;
    let dev: Vec<u16> = format!(r"\\.\{letter}")
        .encode_utf16()
        .chain(Some(0))
        .collect();
    // SAFETY: a NUL-terminated name; no access asked, so no administrator needed.
    let h = unsafe {
        CreateFileW(
            dev.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return None;
    }
    let query = |property, out: &mut [u8]| -> bool {
        let q = STORAGE_PROPERTY_QUERY {
            PropertyId: property,
            QueryType: PropertyStandardQuery,
            AdditionalParameters: [0],
        };
        let mut got = 0u32;
        // SAFETY: an open handle, the query and the output buffer with their true sizes.
        unsafe {
            DeviceIoControl(
                h,
                IOCTL_STORAGE_QUERY_PROPERTY,
                (&q as *const STORAGE_PROPERTY_QUERY).cast(),
                std::mem::size_of::<STORAGE_PROPERTY_QUERY>() as u32,
                out.as_mut_ptr().cast(),
                out.len() as u32,
                &mut got,
                std::ptr::null_mut(),
            ) != 0
        }
    };
    let mut buf = [0u8; 1024];
    let model = query(StorageDeviceProperty, &mut buf)
        .then(|| {
            // SAFETY: the buffer holds a descriptor (the call succeeded); read unaligned.
            let d: STORAGE_DEVICE_DESCRIPTOR =
                unsafe { std::ptr::read_unaligned(buf.as_ptr().cast()) };
            let at = |off: u32| -> String {
                let off = off as usize;
                if off == 0 || off >= buf.len() {
                    return String::new();
                }
                let end = buf[off..]
                    .iter()
                    .position(|&b| b == 0)
                    .map_or(buf.len(), |e| off + e);
                String::from_utf8_lossy(&buf[off..end]).trim().to_string()
            };
            let words = [at(d.VendorIdOffset), at(d.ProductIdOffset)];
            words
                .iter()
                .filter(|w| !w.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|m| !m.is_empty());
    let mut seek = [0u8; std::mem::size_of::<DEVICE_SEEK_PENALTY_DESCRIPTOR>()];
    let rotational = query(StorageDeviceSeekPenaltyProperty, &mut seek).then(|| {
        // SAFETY: as above.
        let d: DEVICE_SEEK_PENALTY_DESCRIPTOR =
            unsafe { std::ptr::read_unaligned(seek.as_ptr().cast()) };
        d.IncursSeekPenalty
    });
    // SAFETY: the handle opened above.
    unsafe { CloseHandle(h) };
    Some(DeviceInfo {
        name: letter.to_string(),
        partition: None,
        model,
        rotational: rotational.map(|r| r as u8 != 0),
        ..DeviceInfo::default()
    })
}

/// A path as a NUL-terminated UTF-16 string.
#[cfg(windows)]
fn wide(path: &Path) -> Vec<u16> {
    use std::os::windows::ffi::OsStrExt;
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}

/// Filesystem size and bytes available to an unprivileged writer.
#[cfg(unix)]
pub fn space(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string and s a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let frsize = s.f_frsize as u64;
    Some((s.f_blocks as u64 * frsize, s.f_bavail as u64 * frsize))
}

/// Filesystem size and bytes available to the calling user (quotas applied).
#[cfg(windows)]
pub fn space(path: &Path) -> Option<(u64, u64)> {
    use windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW;
    let wide = wide(path);
    let (mut avail, mut total) = (0u64, 0u64);
    // SAFETY: a NUL-terminated path and valid out-pointers; the free total is not asked for.
    let ok =
        unsafe { GetDiskFreeSpaceExW(wide.as_ptr(), &mut avail, &mut total, std::ptr::null_mut()) };
    (ok != 0).then_some((total, avail))
}

#[cfg(target_os = "linux")]
struct Mount {
    mount_point: PathBuf,
    options: String,
    fs_type: String,
    source: String,
}

#[cfg(target_os = "linux")]
/// Finds the mount holding `path` in /proc/self/mountinfo: same device numbers, longest mount point
/// that is a prefix of the path (the last one wins when mounts are stacked).
fn find_mount(path: &Path, major: u32, minor: u32) -> Option<Mount> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    parse_mountinfo(&text, path, major, minor)
}

#[cfg(target_os = "linux")]
fn parse_mountinfo(text: &str, path: &Path, major: u32, minor: u32) -> Option<Mount> {
    let want = format!("{major}:{minor}");
    let mut best: Option<(usize, bool, Mount)> = None;
    for line in text.lines() {
        let (pre, post) = line.split_once(" - ")?;
        let f: Vec<&str> = pre.split(' ').collect();
        let g: Vec<&str> = post.split(' ').collect();
        if f.len() < 6 || g.len() < 2 {
            continue;
        }
        let mp = PathBuf::from(unescape(f[4]));
        if !path.starts_with(&mp) {
            continue;
        }
        let same_dev = f[2] == want;
        let depth = mp.components().count();
        let better = match &best {
            None => true,
            Some((d, s, _)) => (same_dev, depth) >= (*s, *d),
        };
        if better {
            let options = match g.get(2) {
                Some(sup) => format!("{},{}", f[5], sup),
                None => f[5].to_string(),
            };
            best = Some((
                depth,
                same_dev,
                Mount {
                    mount_point: mp,
                    options,
                    fs_type: g[0].to_string(),
                    source: unescape(g[1]),
                },
            ));
        }
    }
    best.map(|(_, _, m)| m)
}

/// Where this computer keeps files a user could measure: the filesystems on its drives and
/// network shares (not the kernel's own), and the user's home, for a picker to offer. Linux
/// from /proc/self/mountinfo, macOS /Volumes, Windows its drive letters.
pub fn storage_places() -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = dirs::home_dir().into_iter().collect();
    #[cfg(target_os = "linux")]
    if let Ok(text) = fs::read_to_string("/proc/self/mountinfo") {
        places.extend(places_in_mountinfo(&text));
    }
    #[cfg(target_os = "macos")]
    if let Ok(rd) = fs::read_dir("/Volumes") {
        places.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()));
    }
    #[cfg(windows)]
    places.extend(
        (b'A'..=b'Z')
            .map(|l| PathBuf::from(format!("{}:\\", l as char)))
            .filter(|p| p.exists()),
    );
    let mut seen = std::collections::HashSet::new();
    places.retain(|p| seen.insert(p.clone()));
    places
}

#[cfg(target_os = "linux")]
/// The mount points of block devices and network filesystems, without the system's own places
/// (/boot, /proc, /sys, /dev, /run but for removable media, snaps).
fn places_in_mountinfo(text: &str) -> Vec<PathBuf> {
    const NETWORK: [&str; 6] = ["nfs", "nfs4", "cifs", "smb3", "9p", "fuse.sshfs"];
    let hidden = [
        "/boot",
        "/proc",
        "/sys",
        "/dev",
        "/snap",
        "/var/lib",
        "/var/snap",
    ];
    text.lines()
        .filter_map(|line| {
            let (pre, post) = line.split_once(" - ")?;
            let f: Vec<&str> = pre.split(' ').collect();
            let g: Vec<&str> = post.split(' ').collect();
            let (mp, fs_type, source) = (f.get(4)?, g.first()?, g.get(1)?);
            let mp = PathBuf::from(unescape(mp));
            let system = hidden.iter().any(|h| mp.starts_with(h))
                || (mp.starts_with("/run") && !mp.starts_with("/run/media"));
            let storage = source.starts_with("/dev/") || NETWORK.contains(fs_type);
            (storage && !system).then_some(mp)
        })
        .collect()
}

#[cfg(target_os = "linux")]
/// mountinfo escapes space, tab, newline and backslash as \ooo.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(target_os = "linux")]
fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

#[cfg(target_os = "linux")]
/// Reads what sysfs says about block device `major:minor`, climbing from a partition to its disk.
fn device_info(major: u32, minor: u32) -> Option<DeviceInfo> {
    if major == 0 {
        return None; // tmpfs, overlay, network filesystems: no block device
    }
    let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = fs::canonicalize(&link).ok()?;
    let own = real.file_name()?.to_string_lossy().into_owned();
    let (disk_dir, partition) = if real.join("partition").exists() {
        (real.parent()?.to_path_buf(), Some(own.clone()))
    } else {
        (real.clone(), None)
    };
    let name = disk_dir.file_name()?.to_string_lossy().into_owned();
    let q = disk_dir.join("queue");
    let scheduler = read_trim(q.join("scheduler")).map(|s| {
        // "mq-deadline [none] kyber": the bracketed one is active
        s.split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .map(str::to_string)
            .unwrap_or(s)
    });
    let model = [
        disk_dir.join("device/model"),
        disk_dir.join("device/name"),
        disk_dir.join("loop/backing_file"),
    ]
    .iter()
    .find_map(read_trim)
    .or_else(|| {
        read_trim(disk_dir.join("device/vendor")).map(|v| format!("{v} ({})", driver_of(&disk_dir)))
    })
    .or_else(|| {
        let d = driver_of(&disk_dir);
        (d != "unknown driver").then(|| format!("{d} device"))
    });
    let sectors = read_trim(real.join("size")).and_then(|s| s.parse::<u64>().ok());
    Some(DeviceInfo {
        name,
        partition,
        model,
        rotational: read_trim(q.join("rotational")).map(|s| s == "1"),
        scheduler,
        logical_block_bytes: read_trim(q.join("logical_block_size")).and_then(|s| s.parse().ok()),
        size_bytes: sectors.map(|s| s * 512),
        // virtio-blk and NVMe give the serial beside the disk, SCSI and ATA under its device;
        // an empty one (a virtual disk given none) is none.
        serial: ["serial", "device/serial"]
            .iter()
            .find_map(|f| read_trim(disk_dir.join(f)).filter(|s| !s.is_empty())),
        wwn: ["wwid", "device/wwid"]
            .iter()
            .find_map(|f| read_trim(disk_dir.join(f)).filter(|s| !s.is_empty())),
    })
}

#[cfg(target_os = "linux")]
fn driver_of(disk_dir: &Path) -> String {
    fs::read_link(disk_dir.join("device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown driver".to_string())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro
30 22 0:25 / /tmp/my\\040dir rw,nosuid shared:5 - tmpfs tmpfs rw,size=1024k
31 22 254:0 /srv /srv rw,noatime shared:6 - ext4 /dev/vda rw
";

    #[test]
    fn storage_places_are_drives_and_shares_not_the_systems_own() {
        let text = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 254:1 / /boot rw - ext4 /dev/vda1 rw
24 22 0:5 / /proc rw - proc proc rw
30 22 0:25 / /tmp/my\\040dir rw,nosuid shared:5 - tmpfs tmpfs rw,size=1024k
31 22 8:17 / /run/media/me/Audio\\040SSD rw - exfat /dev/sdb1 rw
32 22 0:40 / /mnt/nas rw - nfs4 nas:/export/audio rw
33 22 7:0 / /run/snapd/ns rw - squashfs /dev/loop0 ro
34 22 7:1 / /snap/core/1 ro - squashfs /dev/loop1 ro
";
        assert_eq!(
            places_in_mountinfo(text),
            ["/", "/run/media/me/Audio SSD", "/mnt/nas"]
                .map(PathBuf::from)
                .to_vec()
        );
    }

    #[test]
    fn mount_lookup_prefers_same_device_and_longest_prefix() {
        let m = parse_mountinfo(MOUNTINFO, Path::new("/home/x"), 254, 0).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/"));
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.options, "rw,relatime,rw,errors=remount-ro");
        let m = parse_mountinfo(MOUNTINFO, Path::new("/tmp/my dir/a"), 0, 25).unwrap();
        assert_eq!(m.fs_type, "tmpfs");
        assert_eq!(m.mount_point, PathBuf::from("/tmp/my dir"));
        let m = parse_mountinfo(MOUNTINFO, Path::new("/srv/a"), 254, 0).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/srv"));
        assert_eq!(m.options, "rw,noatime,rw");
    }

    #[test]
    fn inspects_a_directory_and_a_file() {
        let d = tempfile::tempdir().unwrap();
        let t = inspect(d.path()).unwrap();
        assert_eq!(t.kind, TargetKind::Directory);
        assert!(t.fs_type.is_some());
        assert!(t.free_bytes.unwrap() <= t.total_bytes.unwrap());
        let f = d.path().join("f");
        fs::write(&f, b"hello").unwrap();
        let t = inspect(&f).unwrap();
        assert_eq!(t.kind, TargetKind::File);
        assert_eq!(t.size_bytes, Some(5));
        let e = inspect(&d.path().join("missing")).unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains("no such"), "{e}");
    }

    /// Without /proc (an empty root) statfs still tells a memory filesystem: the figures there
    /// are labelled cached.
    #[cfg(target_os = "linux")]
    #[test]
    fn statfs_names_the_filesystem_where_mountinfo_cannot() {
        if fs::metadata("/dev/shm").is_ok() {
            assert_eq!(
                linux_fs_type(Path::new("/dev/shm")).as_deref(),
                Some("tmpfs")
            );
        }
        let d = tempfile::tempdir().unwrap();
        let from_mountinfo = inspect(d.path()).unwrap().fs_type.unwrap();
        match linux_fs_type(d.path()) {
            Some(t) if t == "ext2/3/4" => assert!(from_mountinfo.starts_with("ext"), "{t}"),
            Some(t) => assert_eq!(t, from_mountinfo),
            None => {}
        }
        assert_eq!(linux_fs_type(Path::new("/no/such/place")), None);
    }
}
