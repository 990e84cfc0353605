//! The trace loader fed arbitrary bytes: random bytes, and committed traces truncated, with
//! bytes overwritten, spliced or deeply nested. It must answer (a trace or an error naming the
//! file) without panicking, and a trace it accepts must give its events or an error.

mod common;

use std::path::{Path, PathBuf};

use leaselab::trace::load::{load, parse};
use proptest::prelude::*;

/// A committed trace to mutate.
fn sample_trace() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/tutorial/step1-race-a10959063b71.json");
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Loads `bytes` from a file, as `leaselab replay/show` do, and checks the answer.
fn check(bytes: &[u8], scratch: &Path, name: &str) -> Result<(), TestCaseError> {
    let path = scratch.join(name);
    std::fs::write(&path, bytes).unwrap();
    match load(&path) {
        Ok(trace) => {
            let _ = trace.events();
        }
        Err(error) => {
            let message = error.to_string();
            prop_assert!(message.contains(name), "{message}");
        }
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = parse(&path, text).map(|trace| trace.events());
    }
    Ok(())
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fuzz-trace-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(prop::sample::Index),
    Overwrite(prop::sample::Index, u8),
    Insert(prop::sample::Index, Vec<u8>),
    Delete(prop::sample::Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let token = prop_oneof![
        Just(b"{".to_vec()),
        Just(b"}".to_vec()),
        Just(b"[".to_vec()),
        Just(b"]".to_vec()),
        Just(b"\"".to_vec()),
        Just(b",".to_vec()),
        Just(b":".to_vec()),
        Just(b"null".to_vec()),
        Just(b"-1".to_vec()),
        Just(b"1e999".to_vec()),
        Just(b"18446744073709551616".to_vec()),
        Just(b"\x00".to_vec()),
        Just(b"\xff".to_vec()),
        Just(b"\\u0000".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..8),
    ];
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (any::<prop::sample::Index>(), any::<u8>())
            .prop_map(|(at, byte)| Mutation::Overwrite(at, byte)),
        (any::<prop::sample::Index>(), token).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        (any::<prop::sample::Index>(), 0usize..64).prop_map(|(at, len)| Mutation::Delete(at, len)),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    match mutation {
        Mutation::Truncate(at) => {
            let at = at.index(bytes.len() + 1);
            bytes.truncate(at);
        }
        Mutation::Overwrite(at, byte) if !bytes.is_empty() => {
            let at = at.index(bytes.len());
            bytes[at] = *byte;
        }
        Mutation::Overwrite(..) => {}
        Mutation::Insert(at, inserted) => {
            let at = at.index(bytes.len() + 1);
            bytes.splice(at..at, inserted.iter().copied());
        }
        Mutation::Delete(at, len) => {
            let at = at.index(bytes.len() + 1);
            let end = (at + len).min(bytes.len());
            bytes.drain(at..end);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(256)))]

    #[test]
    fn arbitrary_bytes_never_panic_the_loader(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check(&bytes, &scratch(), "arbitrary.json")?;
    }

    #[test]
    fn damaged_traces_never_panic_the_loader(mutations in proptest::collection::vec(mutation(), 1..6)) {
        let mut bytes = sample_trace().into_bytes();
        for mutation in &mutations {
            apply(&mut bytes, mutation);
        }
        check(&bytes, &scratch(), "damaged.json")?;
    }
}

#[test]
fn deeply_nested_json_is_an_error_not_a_stack_overflow() {
    let dir = scratch();
    for depth in [200, 100_000] {
        let mut bytes = b"{\"format\":".to_vec();
        bytes.extend(std::iter::repeat_n(b'[', depth));
        bytes.extend(std::iter::repeat_n(b']', depth));
        bytes.push(b'}');
        let path = dir.join("nested.json");
        std::fs::write(&path, &bytes).unwrap();
        let Err(error) = load(&path) else {
            panic!("nested arrays were taken for a trace");
        };
        assert!(error.to_string().contains("nested.json"), "{error}");
    }
}

#[test]
fn a_committed_trace_loads_unchanged() {
    // The mutations start from a trace that loads: otherwise they would test nothing.
    let dir = scratch();
    let path = dir.join("sample.json");
    std::fs::write(&path, sample_trace()).unwrap();
    let trace = load(&path).expect("the committed trace loads");
    assert!(!trace.events().expect("its events parse").is_empty());
}
