//! On-disk cache of compiled CUBINs, so a process that builds the same
//! megakernel again skips NVRTC (seconds) and reads a file (microseconds).
//!
//! # Key
//!
//! A [`Key`] is SHA-256 over everything that decides the CUBIN's bytes: the
//! program name (it ends up in debug/line info), the source, every header's
//! include name and contents (in order), every option (in order), the target
//! arch and the NVRTC `(major, minor)` version. Each field is written with
//! its length first, so no two different inputs hash the same bytes
//! (`("ab","c")` vs `("a","bc")`). The file is `<64 hex digits>.cubin`.
//!
//! NVRTC reports only major.minor, so two patch releases of 13.0 share keys;
//! their CUBINs for one arch are interchangeable, so that is accepted.
//!
//! # Location and switches
//!
//! `$AUTARKY_CACHE_DIR`, else `$XDG_CACHE_HOME/autarky`, else
//! `$HOME/.cache/autarky`, else `<temp dir>/autarky-cache`.
//! `AUTARKY_CACHE=0` turns the cache off.
//!
//! # Failure
//!
//! The cache is an optimisation: [`CubinCache::load`] and
//! [`CubinCache::store`] return errors for the caller to log, and the
//! compiler goes on without the cache. Writes go to a unique temporary file
//! in the same directory and are `rename`d into place, so a reader sees
//! either no file or a whole one, even with several processes compiling at
//! once; a loaded file that does not start with the ELF magic is treated as
//! a miss.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::Error;

/// Every CUBIN is an ELF file.
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Identity of one compile: SHA-256 of all its inputs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    /// Hashes the inputs of one compile. `headers` are `(include name,
    /// contents)`; `options` are exactly as passed to NVRTC.
    pub fn new(
        name: &str,
        source: &str,
        headers: &[(&str, &str)],
        options: &[String],
        arch: u32,
        nvrtc_version: (i32, i32),
    ) -> Key {
        let mut h = Sha256::new();
        // Bump the tag when the layout below changes, to orphan old files.
        field(&mut h, b"autarky-cubin-key-v1");
        field(&mut h, name.as_bytes());
        field(&mut h, source.as_bytes());
        h.update((headers.len() as u64).to_le_bytes());
        for (inc, body) in headers {
            field(&mut h, inc.as_bytes());
            field(&mut h, body.as_bytes());
        }
        h.update((options.len() as u64).to_le_bytes());
        for o in options {
            field(&mut h, o.as_bytes());
        }
        h.update(arch.to_le_bytes());
        h.update(nvrtc_version.0.to_le_bytes());
        h.update(nvrtc_version.1.to_le_bytes());
        Key(h.finalize().into())
    }

    /// The key as 64 lower-case hex digits.
    pub fn hex(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::with_capacity(64);
        for b in self.0 {
            write!(s, "{b:02x}").expect("writing to a String cannot fail");
        }
        s
    }
}

/// Length-prefixed field, so concatenations cannot collide.
fn field(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// A directory of `<key>.cubin` files.
#[derive(Clone, Debug)]
pub struct CubinCache {
    dir: PathBuf,
}

impl CubinCache {
    /// The cache the environment asks for, or `None` when `AUTARKY_CACHE=0`.
    pub fn from_env() -> Option<CubinCache> {
        if std::env::var_os("AUTARKY_CACHE").is_some_and(|v| v == "0") {
            return None;
        }
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let dir = var("AUTARKY_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("autarky")))
            .or_else(|| var("HOME").map(|d| d.join(".cache/autarky")))
            .unwrap_or_else(|| std::env::temp_dir().join("autarky-cache"));
        Some(CubinCache { dir })
    }

    /// A cache in `dir` (created on first store).
    pub fn at(dir: impl Into<PathBuf>) -> CubinCache {
        CubinCache { dir: dir.into() }
    }

    /// `(cubins, bytes)` stored in the cache now (0, 0 when the directory
    /// does not exist yet).
    pub fn usage(&self) -> (u64, u64) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return (0, 0);
        };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "cubin"))
            .filter_map(|e| e.metadata().ok())
            .fold((0, 0), |(n, b), m| (n + 1, b + m.len()))
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the CUBIN for `key` lives (whether or not it exists yet).
    pub fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.cubin", key.hex()))
    }

    /// The cached CUBIN for `key`: `Ok(None)` on a miss, including a file
    /// that is not an ELF image (left by something other than [`Self::store`]).
    pub fn load(&self, key: &Key) -> Result<Option<Vec<u8>>, Error> {
        let path = self.path(key);
        match std::fs::read(&path) {
            Ok(bytes) if bytes.starts_with(ELF_MAGIC) => {
                tracing::info!("cubin cache hit {}", path.display());
                Ok(Some(bytes))
            }
            Ok(_) => {
                tracing::warn!("ignoring {}: not an ELF file", path.display());
                Ok(None)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::debug!("cubin cache miss {}", path.display());
                Ok(None)
            }
            Err(source) => Err(Error::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Stores `cubin` under `key`, atomically: a unique temporary file in the
    /// cache directory, then `rename` over the final name.
    pub fn store(&self, key: &Key, cubin: &[u8]) -> Result<PathBuf, Error> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| Error::Io { path, source }
        };
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let path = self.path(key);
        // Unique per process and per call, so concurrent writers never share
        // a temporary file.
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        // Relaxed: the counter only has to be unique, it orders nothing.
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!(".{}.{}.{seq}.tmp", key.hex(), std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(cubin)?;
            f.sync_all()
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(&tmp)(e));
        }
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(&path)(e));
        }
        tracing::debug!("cubin cached at {}", path.display());
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Key {
        Key::new(
            "k.cu",
            "src",
            &[("a.h", "A"), ("b.h", "B")],
            &["-O3".into()],
            90,
            (13, 0),
        )
    }

    #[test]
    fn key_changes_when_any_input_changes() {
        let b = base();
        let o = |s: &str| vec![s.to_string()];
        let variants = [
            Key::new(
                "j.cu",
                "src",
                &[("a.h", "A"), ("b.h", "B")],
                &o("-O3"),
                90,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src2",
                &[("a.h", "A"), ("b.h", "B")],
                &o("-O3"),
                90,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("a.h", "A2"), ("b.h", "B")],
                &o("-O3"),
                90,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("a2.h", "A"), ("b.h", "B")],
                &o("-O3"),
                90,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("b.h", "B"), ("a.h", "A")],
                &o("-O3"),
                90,
                (13, 0),
            ),
            Key::new("k.cu", "src", &[("a.h", "A")], &o("-O3"), 90, (13, 0)),
            Key::new(
                "k.cu",
                "src",
                &[("a.h", "A"), ("b.h", "B")],
                &o("-O2"),
                90,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("a.h", "A"), ("b.h", "B")],
                &[],
                90,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("a.h", "A"), ("b.h", "B")],
                &o("-O3"),
                100,
                (13, 0),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("a.h", "A"), ("b.h", "B")],
                &o("-O3"),
                90,
                (13, 1),
            ),
            Key::new(
                "k.cu",
                "src",
                &[("a.h", "A"), ("b.h", "B")],
                &o("-O3"),
                90,
                (12, 0),
            ),
        ];
        for (i, v) in variants.iter().enumerate() {
            assert_ne!(*v, b, "variant {i} hashed like the base");
        }
        assert_eq!(base(), b, "same inputs, same key");
    }

    #[test]
    fn key_does_not_confuse_moved_field_boundaries() {
        let a = Key::new("n", "ab", &[], &["c".into()], 90, (13, 0));
        let b = Key::new("n", "a", &[], &["bc".into()], 90, (13, 0));
        let c = Key::new("n", "src", &[("x", "yz")], &[], 90, (13, 0));
        let d = Key::new("n", "src", &[("xy", "z")], &[], 90, (13, 0));
        assert_ne!(a, b);
        assert_ne!(c, d);
    }

    #[test]
    fn key_file_name_is_64_hex_digits_dot_cubin() {
        let c = CubinCache::at("/cache");
        let p = c.path(&base());
        let name = p.file_name().unwrap().to_str().unwrap();
        let (hex, ext) = name.split_once('.').unwrap();
        assert_eq!(ext, "cubin");
        assert_eq!(hex.len(), 64);
        assert!(hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }

    #[test]
    fn store_then_load_round_trips_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("autarky-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let c = CubinCache::at(dir.join("nested"));
        let k = base();
        assert_eq!(c.usage(), (0, 0), "no directory yet");
        assert!(c.load(&k).unwrap().is_none(), "empty cache misses");
        let cubin = b"\x7fELF\x02\x01\x01 pretend cubin".to_vec();
        let stored = c.store(&k, &cubin).unwrap();
        assert_eq!(stored, c.path(&k));
        assert_eq!(c.load(&k).unwrap(), Some(cubin.clone()));
        let other = Key::new("k.cu", "src", &[], &[], 90, (13, 0));
        assert!(
            c.load(&other).unwrap().is_none(),
            "another key still misses"
        );
        let names: Vec<_> = std::fs::read_dir(c.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![format!("{}.cubin", k.hex())]);
        assert_eq!(
            c.usage(),
            (1, cubin.len() as u64),
            "what `autarky info` reports"
        );
        // Overwriting an entry is fine (two processes racing to store).
        c.store(&k, &cubin).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_elf_file_in_the_cache_is_a_miss() {
        let dir = std::env::temp_dir().join(format!("autarky-cache-junk-{}", std::process::id()));
        let c = CubinCache::at(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(c.path(&base()), b"").unwrap();
        assert!(c.load(&base()).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
