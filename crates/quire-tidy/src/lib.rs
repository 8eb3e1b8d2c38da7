//! quire's house rules live in this crate's tests (`tests/tidy.rs`): they
//! read the repository's sources and manifests, so they run without
//! compiling quire (`scripts/test --fast` runs them first).
