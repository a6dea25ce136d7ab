//! Awaited-word ids: what a wait event's `arg` names.
//!
//! The device (and an emulator that records like it) names the word a
//! block waited for by its [`WaitKind`] and index, packed as
//! `(kind << 32) | index` ([`wait_word`], the same encoding as
//! `autarky_shared::trace_wait_word` and the device's `trace_wait_word`).
//! Host recorders may use any other id below 2^32 (a body's own word ids);
//! [`describe_word`] names both.

use autarky_shared::{AbiEnum, WaitKind};

/// The id of the word a wait of `kind` at `index` awaits.
pub fn wait_word(kind: WaitKind, index: u32) -> u64 {
    autarky_shared::trace_wait_word(kind, index)
}

/// `(kind, index)` of a [`wait_word`], `None` for an id that is not one
/// (a plain word id below 2^32, or an unknown kind).
pub fn split_wait_word(word: u64) -> Option<(WaitKind, u32)> {
    let kind = u32::try_from(word >> 32).ok()?;
    match WaitKind::from_u32(kind)? {
        WaitKind::None => None,
        k => Some((k, word as u32)),
    }
}

/// A short name for an awaited word: `queue item 5`, `user word 7`,
/// `comm idle 0`…, or the plain number for ids that are not wait words.
pub fn describe_word(word: u64) -> String {
    let Some((kind, index)) = split_wait_word(word) else {
        return word.to_string();
    };
    let what = match kind {
        WaitKind::QueueItem => "queue item",
        WaitKind::QueueSpace => "queue space",
        WaitKind::UserWord => "user word",
        WaitKind::Signal => "signal",
        WaitKind::TestHold => "test hold",
        WaitKind::Progress => "progress",
        WaitKind::Predecessors => "predecessors of",
        WaitKind::CommIdle => "comm idle",
        WaitKind::None => "none",
    };
    format!("{what} {index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_words_round_trip_and_plain_ids_stay_numbers() {
        let w = wait_word(WaitKind::UserWord, 7);
        assert_eq!(split_wait_word(w), Some((WaitKind::UserWord, 7)));
        assert_eq!(describe_word(w), "user word 7");
        assert_eq!(
            describe_word(wait_word(WaitKind::QueueItem, 0)),
            "queue item 0"
        );
        assert_eq!(split_wait_word(42), None);
        assert_eq!(describe_word(42), "42");
        // An unknown kind in the high word is a plain number, not a guess.
        assert_eq!(describe_word(99 << 32), (99u64 << 32).to_string());
    }
}
