//! Screentone's paper: where the letters the glyph rules see are its
//! dots.

/// Paper that holds at least [`SPECKS`] specks of ink smaller than a
/// letter, one or more for every `SPECK_AREA` pixels of it, half of one
/// size ([`ONE_SIZE`] of them within a pixel of the commonest, which is
/// at least 2 × 2), is a screentone's: dots every few pixels, all alike.
/// A balloon holds a few specks (punctuation), a scan's paper single
/// pixels of dirt, and a worn print's letters break into bits of every
/// size. Glyphs on a screentone's paper are its dots, merged in pairs
/// where two screens cross.
const SPECKS: usize = 50;
const SPECK_AREA: u64 = 150;
const ONE_SIZE: f64 = 0.5;

/// Whether paper of `area` pixels holding specks of these sizes is a
/// screentone's: see [`SPECKS`].
pub(super) fn screentone(area: u64, specks: &[(u32, u32)]) -> bool {
    if specks.len() < SPECKS || (specks.len() as u64) * SPECK_AREA < area {
        return false;
    }
    let mut counts = std::collections::HashMap::new();
    for size in specks {
        *counts.entry(*size).or_insert(0usize) += 1;
    }
    let Some((&(w, h), _)) = counts.iter().max_by_key(|(size, n)| (**n, **size)) else {
        return false;
    };
    // Single pixels are noise and dirt, not a screen's dots.
    if w < 2 || h < 2 {
        return false;
    }
    let alike = specks
        .iter()
        .filter(|(sw, sh)| sw.abs_diff(w) <= 1 && sh.abs_diff(h) <= 1)
        .count();
    let share = alike as f64 / specks.len() as f64;
    share >= ONE_SIZE
}
