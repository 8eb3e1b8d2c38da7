//! Content-addressed blobs (page images, masks): `blobs/ab/cdef…`, named by
//! the BLAKE3 hash of their bytes, written once (temp file, fsync, rename)
//! and verified on every read.

use std::io::Write;
use std::path::{Path, PathBuf};

use quire_model::hash::BlobHash;

use crate::storage::{self, fsync_dir};
use quire_model::error::{CoreError, CoreResult};

/// The media type of blob bytes, from their signature: a page image's
/// (PNG, JPEG, WebP), else `application/octet-stream`.
pub fn media_type(bytes: &[u8]) -> &'static str {
    match imagesize::image_type(bytes) {
        Ok(imagesize::ImageType::Png) => "image/png",
        Ok(imagesize::ImageType::Jpeg) => "image/jpeg",
        Ok(imagesize::ImageType::Webp) => "image/webp",
        _ => "application/octet-stream",
    }
}

/// The blob directory of one project.
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    pub fn new(project_dir: &Path) -> Self {
        BlobStore {
            dir: project_dir.join("blobs"),
        }
    }

    fn path_of(&self, hash: &BlobHash) -> PathBuf {
        let hex = hash.to_hex();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    pub fn contains(&self, hash: &BlobHash) -> bool {
        self.path_of(hash).is_file()
    }

    /// Stores `bytes` durably and returns their hash. Storing the same bytes
    /// again is a no-op.
    pub fn put(&self, bytes: &[u8]) -> CoreResult<BlobHash> {
        let hash = BlobHash::of(bytes);
        let path = self.path_of(&hash);
        if path.is_file() {
            return Ok(hash);
        }
        let Some(shard) = path.parent() else {
            return Err(CoreError::internal("blob path has no parent"));
        };
        storage::private_dir(&self.dir)?;
        storage::private_dir(shard)?;
        let mut tmp = storage::temp_file_in(shard)?;
        tmp.write_all(bytes)
            .and_then(|_| tmp.as_file().sync_all())
            .map_err(|e| CoreError::io_during("writing a blob", e))?;
        tmp.persist(&path)
            .map_err(|e| CoreError::io(&path, e.error))?;
        fsync_dir(shard)?;
        fsync_dir(&self.dir)?;
        Ok(hash)
    }

    /// A set of blobs written to temporary files beside their places and
    /// moved into them together by [`Staging::commit`]; dropped uncommitted,
    /// they are removed (and a crash's leftovers are temporary files that
    /// the next open removes), so a refused import stores nothing.
    pub fn staging(&self) -> Staging {
        Staging {
            store: self.clone(),
            staged: Vec::new(),
        }
    }

    /// The bytes of `hash`, verified; an unknown hash is `NotFound` and
    /// damaged bytes are `Corrupt`.
    pub fn get(&self, hash: &BlobHash) -> CoreResult<Vec<u8>> {
        let path = self.path_of(hash);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CoreError::not_found("blob", hash));
            }
            Err(e) => return Err(CoreError::io(&path, e)),
        };
        if BlobHash::of(&bytes) != *hash {
            return Err(CoreError::Corrupt {
                file: path,
                line: None,
                message: "blob content does not match its hash".into(),
            });
        }
        Ok(bytes)
    }
}

/// Blobs written but not yet in place; see [`BlobStore::staging`].
pub struct Staging {
    store: BlobStore,
    staged: Vec<(BlobHash, tempfile::NamedTempFile)>,
}

impl Staging {
    /// Writes `bytes` to a temporary file in their shard; returns their
    /// hash. Bytes already stored (or staged) are not written again.
    pub fn put(&mut self, bytes: &[u8]) -> CoreResult<BlobHash> {
        let hash = BlobHash::of(bytes);
        if self.staged.iter().any(|(h, _)| *h == hash) || self.store.contains(&hash) {
            return Ok(hash);
        }
        let path = self.store.path_of(&hash);
        let Some(shard) = path.parent() else {
            return Err(CoreError::internal("blob path has no parent"));
        };
        storage::private_dir(&self.store.dir)?;
        storage::private_dir(shard)?;
        let mut tmp = storage::temp_file_in(shard)?;
        tmp.write_all(bytes)
            .and_then(|_| tmp.as_file().sync_all())
            .map_err(|e| CoreError::io_during("writing a blob", e))?;
        self.staged.push((hash, tmp));
        Ok(hash)
    }

    /// Moves every staged blob into its place, durably.
    pub fn commit(self) -> CoreResult<()> {
        let mut shards: Vec<PathBuf> = Vec::new();
        for (hash, tmp) in self.staged {
            let path = self.store.path_of(&hash);
            tmp.persist(&path)
                .map_err(|e| CoreError::io(&path, e.error))?;
            if let Some(shard) = path.parent()
                && !shards.iter().any(|s| s == shard)
            {
                shards.push(shard.to_path_buf());
            }
        }
        for shard in &shards {
            fsync_dir(shard)?;
        }
        if !shards.is_empty() {
            fsync_dir(&self.store.dir)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_get_verify() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let hash = store.put(b"hello").unwrap();
        assert_eq!(store.put(b"hello").unwrap(), hash);
        assert_eq!(store.get(&hash).unwrap(), b"hello");
        let other = BlobHash::of(b"nope");
        assert_eq!(store.get(&other).unwrap_err().code(), "not_found");
        std::fs::write(store.path_of(&hash), b"tampered").unwrap();
        assert_eq!(store.get(&hash).unwrap_err().code(), "corrupt");
    }

    #[test]
    fn staged_blobs_appear_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let mut staging = store.staging();
        let hash = staging.put(b"page").unwrap();
        assert!(!store.contains(&hash));
        drop(staging);
        assert!(!store.contains(&hash));
        let leftovers = walk(&dir.path().join("blobs"));
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let mut staging = store.staging();
        let hash = staging.put(b"page").unwrap();
        staging.commit().unwrap();
        assert_eq!(store.get(&hash).unwrap(), b"page");
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                files.extend(walk(&entry.path()));
            } else {
                files.push(entry.path());
            }
        }
        files
    }

    #[test]
    fn hash_parsing_is_strict() {
        let h = BlobHash::of(b"x");
        assert_eq!(h.to_hex().parse::<BlobHash>().unwrap(), h);
        assert!("abc".parse::<BlobHash>().is_err());
        assert!(h.to_hex().to_uppercase().parse::<BlobHash>().is_err());
    }
}
