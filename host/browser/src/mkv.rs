//! A Matroska file of JPEG pictures (`V_MJPEG`), each at its own time: what
//! `page_video` writes. Append-only: the header (its segment of unknown
//! size), then one cluster per picture, so a file cut short by a crash holds
//! every picture written before it and still plays; `finish` writes the
//! duration into the place the header kept for it. (No crate writes this
//! small a file without a media framework or a C library: the format is
//! RFC 8794's EBML with Matroska's element IDs, RFC 9559.)

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::time::SystemTime;

/// Element IDs (their marker bits included, as written).
const EBML: &[u8] = &[0x1A, 0x45, 0xDF, 0xA3];
const SEGMENT: &[u8] = &[0x18, 0x53, 0x80, 0x67];
const INFO: &[u8] = &[0x15, 0x49, 0xA9, 0x66];
const TRACKS: &[u8] = &[0x16, 0x54, 0xAE, 0x6B];
const CLUSTER: &[u8] = &[0x1F, 0x43, 0xB6, 0x75];
const VOID: &[u8] = &[0xEC];
const SEEK_HEAD: &[u8] = &[0x11, 0x4D, 0x9B, 0x74];
const CHAPTERS: &[u8] = &[0x10, 0x43, 0xA7, 0x70];
/// The place kept at the segment's start for a SeekHead naming the chapters
/// (written at the end): a SeekHead of one Seek, its position in 8 bytes, is
/// 26 bytes; a Void fills the rest.
const SEEK_HEAD_ROOM: usize = 32;
const DURATION: &[u8] = &[0x44, 0x89];
/// A Duration element: its ID, its size (8) and a 64-bit float.
const DURATION_LEN: usize = 2 + 1 + 8;
/// Seconds from the Unix epoch to Matroska's (2001-01-01T00:00:00Z).
const EPOCH_2001: u64 = 978_307_200;

/// A variable-length integer of EBML (an element's size), as short as it
/// can be.
fn vint(n: u64) -> Vec<u8> {
    for len in 1..8u32 {
        // (All ones at a length means "unknown": not a size.)
        if n < (1u64 << (7 * len)) - 1 {
            let v = n | (1u64 << (7 * len));
            return v.to_be_bytes()[(8 - len) as usize..].to_vec();
        }
    }
    let mut out = vec![0x01];
    out.extend_from_slice(&n.to_be_bytes()[1..]);
    out
}

/// An element: its ID, its size, its data.
fn el(id: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = id.to_vec();
    out.extend(vint(data.len() as u64));
    out.extend_from_slice(data);
    out
}

/// An unsigned integer element, in as few bytes as hold it.
fn uint(id: &[u8], v: u64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take(7).take_while(|b| **b == 0).count();
    el(id, &bytes[skip..])
}

/// The width and height a JPEG says it has (its start-of-frame segment).
pub(crate) fn jpeg_size(jpeg: &[u8]) -> Option<(u32, u32)> {
    if jpeg.get(..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut i = 2;
    while i + 4 <= jpeg.len() {
        if jpeg[i] != 0xFF {
            return None;
        }
        let marker = jpeg[i + 1];
        let len = usize::from(u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]));
        // A start of frame (SOF0-15 but DHT, JPG and DAC).
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let h = u16::from_be_bytes([*jpeg.get(i + 5)?, *jpeg.get(i + 6)?]);
            let w = u16::from_be_bytes([*jpeg.get(i + 7)?, *jpeg.get(i + 8)?]);
            return Some((u32::from(w), u32::from(h)));
        }
        i += 2 + len;
    }
    None
}

/// A video being written.
pub(crate) struct Mkv {
    file: File,
    /// Where the Duration's place is (a Void of its length until `finish`).
    duration_at: u64,
    /// Where the segment's data begins (positions in a SeekHead count from
    /// there); the SeekHead's place is its first bytes.
    segment_at: u64,
    /// The last picture's time (ms from the start), and the pictures written.
    last_ms: u64,
    pub(crate) frames: u64,
    pub(crate) bytes: u64,
    pub(crate) size: (u32, u32),
}

impl Mkv {
    /// A new file at `path` (none there before) whose video began at
    /// `began`, its pictures `size` wide and high.
    pub(crate) fn create(
        path: &Path,
        began: SystemTime,
        size: (u32, u32),
    ) -> std::io::Result<Self> {
        let mut file = File::options().write(true).create_new(true).open(path)?;
        let mut head = el(
            EBML,
            &[
                uint(&[0x42, 0x86], 1),
                uint(&[0x42, 0xF7], 1),
                uint(&[0x42, 0xF2], 4),
                uint(&[0x42, 0xF3], 8),
                el(&[0x42, 0x82], b"matroska"),
                uint(&[0x42, 0x87], 4),
                uint(&[0x42, 0x85], 2),
            ]
            .concat(),
        );
        // The segment's size is unknown: clusters follow until the file ends.
        head.extend_from_slice(SEGMENT);
        head.extend_from_slice(&[0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        let segment_at = head.len() as u64;
        // The SeekHead's place (it names the chapters, at the end).
        head.extend(el(VOID, &[0; SEEK_HEAD_ROOM - 2]));
        let since_2001 = began
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.saturating_sub(std::time::Duration::from_secs(EPOCH_2001)))
            .unwrap_or_default();
        let date = i64::try_from(since_2001.as_nanos()).unwrap_or(0);
        let info_head = [
            uint(&[0x2A, 0xD7, 0xB1], 1_000_000),
            el(&[0x4D, 0x80], b"ochre"),
            el(&[0x57, 0x41], b"ochre"),
            el(&[0x44, 0x61], &date.to_be_bytes()),
        ]
        .concat();
        // The Duration's place: a Void as long as it, until `finish`.
        let void = el(VOID, &[0; DURATION_LEN - 2]);
        let info = el(INFO, &[info_head.clone(), void].concat());
        let duration_at = (head.len() + info.len() - DURATION_LEN) as u64;
        head.extend(info);
        let video = [uint(&[0xB0], u64::from(size.0)), uint(&[0xBA], u64::from(size.1))].concat();
        let track = [
            uint(&[0xD7], 1),
            uint(&[0x73, 0xC5], 1),
            uint(&[0x83], 1),
            uint(&[0x9C], 0),
            el(&[0x86], b"V_MJPEG"),
            el(&[0xE0], &video),
        ]
        .concat();
        head.extend(el(TRACKS, &el(&[0xAE], &track)));
        file.write_all(&head)?;
        let bytes = head.len() as u64;
        Ok(Self { file, duration_at, segment_at, last_ms: 0, frames: 0, bytes, size })
    }

    /// A picture shown from `at_ms` after the start (an earlier time than the
    /// last picture's is taken as the last's).
    pub(crate) fn frame(&mut self, at_ms: u64, jpeg: &[u8]) -> std::io::Result<()> {
        self.put(at_ms, jpeg, false)
    }

    /// The video's last picture, at its end (`at_ms`), shown for a
    /// millisecond: a reader ends the video there. (A picture with no
    /// duration of its own is given one by the reader: FFmpeg's WebM copy
    /// took the pictures' usual spacing, and ran 160 ms past the end.)
    pub(crate) fn last_frame(&mut self, at_ms: u64, jpeg: &[u8]) -> std::io::Result<()> {
        self.put(at_ms, jpeg, true)
    }

    fn put(&mut self, at_ms: u64, jpeg: &[u8], last: bool) -> std::io::Result<()> {
        let at = at_ms.max(self.last_ms);
        // Track 1, at the cluster's time: a key frame's SimpleBlock, or for
        // the last picture a BlockGroup of its Block (no flags: a Block with
        // no ReferenceBlock is a key frame) and its BlockDuration (1 ms).
        let mut block = vec![0x81, 0x00, 0x00, if last { 0x00 } else { 0x80 }];
        block.extend_from_slice(jpeg);
        let body = if last {
            el(&[0xA0], &[el(&[0xA1], &block), uint(&[0x9B], 1)].concat())
        } else {
            el(&[0xA3], &block)
        };
        let cluster = el(CLUSTER, &[uint(&[0xE7], at), body].concat());
        self.file.write_all(&cluster)?;
        self.last_ms = at;
        self.frames += 1;
        self.bytes += cluster.len() as u64;
        Ok(())
    }

    /// Its length so far (ms): the last picture's time.
    pub(crate) fn last_ms(&self) -> u64 {
        self.last_ms
    }

    /// Write its chapters (each from its time, in ms, with its title) at
    /// the end and their place in the header, its duration (ms) in the
    /// header, and sync it to disk. Its size then.
    pub(crate) fn finish(
        mut self,
        duration_ms: u64,
        chapters: &[(u64, String)],
    ) -> std::io::Result<u64> {
        if !chapters.is_empty() {
            let at = self.bytes - self.segment_at;
            let atoms: Vec<u8> = chapters
                .iter()
                .enumerate()
                .flat_map(|(i, (ms, title))| {
                    let display = el(
                        &[0x80],
                        &[el(&[0x85], title.as_bytes()), el(&[0x43, 0x7C], b"eng")].concat(),
                    );
                    let atom = [
                        uint(&[0x73, 0xC4], i as u64 + 1),
                        uint(&[0x91], ms.min(&duration_ms) * 1_000_000),
                        display,
                    ];
                    el(&[0xB6], &atom.concat())
                })
                .collect();
            let edition = el(&[0x45, 0xB9], &[uint(&[0x45, 0xBC], 1), atoms].concat());
            let written = el(CHAPTERS, &edition);
            self.file.write_all(&written)?;
            self.bytes += written.len() as u64;
            // SeekHead { Seek { SeekID: Chapters, SeekPosition: 8 bytes } }.
            let seek = [el(&[0x53, 0xAB], CHAPTERS), el(&[0x53, 0xAC], &at.to_be_bytes())].concat();
            let mut head = el(SEEK_HEAD, &el(&[0x4D, 0xBB], &seek));
            head.extend(el(VOID, &vec![0; SEEK_HEAD_ROOM - head.len() - 2]));
            debug_assert_eq!(head.len(), SEEK_HEAD_ROOM);
            self.file.seek(SeekFrom::Start(self.segment_at))?;
            self.file.write_all(&head)?;
        }
        #[allow(clippy::cast_precision_loss)]
        let d = el(DURATION, &(duration_ms as f64).to_be_bytes());
        debug_assert_eq!(d.len(), DURATION_LEN);
        self.file.seek(SeekFrom::Start(self.duration_at))?;
        self.file.write_all(&d)?;
        self.file.sync_all()?;
        Ok(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_ebml_variable_length_integers() {
        assert_eq!(vint(0), [0x80]);
        assert_eq!(vint(126), [0xFE]);
        // 127 at one byte would be all ones ("unknown").
        assert_eq!(vint(127), [0x40, 0x7F]);
        assert_eq!(vint(16_382), [0x7F, 0xFE]);
        assert_eq!(vint(16_383), [0x20, 0x3F, 0xFF]);
        assert_eq!(uint(&[0xE7], 0), [0xE7, 0x81, 0x00]);
        assert_eq!(uint(&[0xE7], 300), [0xE7, 0x82, 0x01, 0x2C]);
    }

    #[test]
    fn a_jpegs_size_is_read_from_its_frame_header() {
        // SOI, an APP0 of 4 bytes, SOF0 (8 bits, 600 high, 800 wide).
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x02,
            0x58, 0x03, 0x20,
        ];
        assert_eq!(jpeg_size(&jpeg), Some((800, 600)));
        assert_eq!(jpeg_size(b"not a jpeg"), None);
        assert_eq!(jpeg_size(&jpeg[..12]), None);
    }

    #[test]
    fn the_duration_goes_where_the_header_kept_its_place() {
        let dir = std::env::temp_dir().join(format!("ochre-mkv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("v.mkv");
        let _ = std::fs::remove_file(&path);
        let mut v = Mkv::create(&path, SystemTime::now(), (8, 6)).expect("create");
        let at = v.duration_at as usize;
        v.frame(0, &[0xFF, 0xD8, 0xFF, 0xD9]).expect("frame");
        v.frame(40, &[0xFF, 0xD8, 0xFF, 0xD9]).expect("frame");
        let plain = std::fs::read(&path).expect("read").len();
        v.last_frame(1_250, &[0xFF, 0xD8, 0xFF, 0xD9]).expect("frame");
        assert_eq!((v.frames, v.last_ms()), (3, 1_250));
        let before = std::fs::read(&path).expect("read");
        // The last picture: a cluster at 1,250 ms holding a BlockGroup of its
        // Block (track 1, no flags) and a BlockDuration of 1 ms.
        let group = [0xA0, 0x8D, 0xA1, 0x88, 0x81, 0x00, 0x00, 0x00, 0xFF, 0xD8, 0xFF, 0xD9];
        let last = &before[plain..];
        assert_eq!(&last[..4], CLUSTER);
        assert_eq!(&last[last.len() - 15..], &[&group[..], &[0x9B, 0x81, 0x01]].concat()[..]);
        assert_eq!(before[at], 0xEC, "a Void first");
        let segment = v.segment_at as usize;
        assert_eq!(before[segment], 0xEC, "the SeekHead's place: a Void");
        let bytes = v
            .finish(1_250, &[(0, "navigate: t1 at /".into()), (2_000, "click: done".into())])
            .expect("finish");
        let after = std::fs::read(&path).expect("read");
        assert_eq!(after.len() as u64, bytes);
        assert_eq!(&after[..before.len()][..segment], &before[..segment]);
        assert_eq!(&after[at..at + 3], &[0x44, 0x89, 0x88]);
        assert_eq!(f64::from_be_bytes(after[at + 3..at + 11].try_into().expect("8")), 1250.0);
        // The SeekHead names the chapters, written after the last cluster.
        assert_eq!(&after[segment..segment + 4], SEEK_HEAD);
        let pos = u64::from_be_bytes(after[segment + 18..segment + 26].try_into().expect("8"));
        let chapters = segment + pos as usize;
        assert_eq!(chapters, before.len());
        assert_eq!(&after[chapters..chapters + 4], CHAPTERS);
        assert_eq!(after[segment + 26], 0xEC, "a Void fills the rest");
        let text = String::from_utf8_lossy(&after[chapters..]);
        assert!(text.contains("navigate: t1 at /") && text.contains("click: done"));
        // A chapter past the end starts at the end (1.25 s, in ns).
        assert!(after[chapters..].windows(5).any(|w| w == [0x91, 0x84, 0x4A, 0x81, 0x7C]));
        std::fs::remove_dir_all(&dir).expect("clean");
    }
}
