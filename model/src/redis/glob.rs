//! Redis's glob-style patterns (`KEYS`, `SCAN ... MATCH`), as `stringmatchlen` in Redis's
//! `util.c` matches them: `*` any run of bytes, `?` one byte, `[abc]`, `[^abc]`, `[a-z]` (ends
//! in either order) one byte of a class, `\x` the byte `x`. Bytes are compared as C `char`s,
//! signed on the platforms Redis runs on, which decides a range over bytes above 127.
//!
//! Redis 7.0 recurses once per `*` without a limit (a long enough pattern can exhaust its
//! stack); later releases stop at 1,000 nested `*`s and answer "no match", as this does.

/// How deep `*`s may nest before a pattern matches nothing (Redis 7.2's limit).
const NESTING_LIMIT: u32 = 1_000;

/// True when `string` matches `pattern`.
pub fn matches(pattern: &[u8], string: &[u8]) -> bool {
    let mut skip_longer = false;
    match_at(pattern, string, &mut skip_longer, 0)
}

/// A byte as a signed C `char`.
fn signed(byte: u8) -> i32 {
    i32::from(byte as i8)
}

fn match_at(mut pattern: &[u8], mut string: &[u8], skip_longer: &mut bool, nesting: u32) -> bool {
    if nesting > NESTING_LIMIT {
        return false;
    }
    // `pattern[1]` past the end reads the terminating NUL in C.
    let at = |p: &[u8], i: usize| p.get(i).copied().unwrap_or(0);
    while !pattern.is_empty() && !string.is_empty() {
        match pattern[0] {
            b'*' => {
                while pattern.len() > 1 && pattern[1] == b'*' {
                    pattern = &pattern[1..];
                }
                if pattern.len() == 1 {
                    return true;
                }
                while !string.is_empty() {
                    if match_at(&pattern[1..], string, skip_longer, nesting + 1) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    string = &string[1..];
                }
                // No match for the rest of the pattern anywhere in the rest of the string:
                // a longer match for an earlier `*` cannot help either.
                *skip_longer = true;
                return false;
            }
            b'?' => string = &string[1..],
            b'[' => {
                pattern = &pattern[1..];
                let not = at(pattern, 0) == b'^';
                if not {
                    pattern = &pattern[1..];
                }
                let mut matched = false;
                loop {
                    if at(pattern, 0) == b'\\' && pattern.len() >= 2 {
                        pattern = &pattern[1..];
                        if pattern[0] == string[0] {
                            matched = true;
                        }
                    } else if at(pattern, 0) == b']' && !pattern.is_empty() {
                        break;
                    } else if pattern.is_empty() {
                        // An unclosed class: C steps back one so that the step below ends
                        // the pattern.
                        break;
                    } else if pattern.len() >= 3 && pattern[1] == b'-' {
                        let (mut start, mut end) = (signed(pattern[0]), signed(pattern[2]));
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        let c = signed(string[0]);
                        pattern = &pattern[2..];
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if pattern[0] == string[0] {
                        matched = true;
                    }
                    pattern = &pattern[1..];
                }
                if not {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                string = &string[1..];
                if pattern.is_empty() {
                    // The unclosed class consumed the pattern: nothing is left to step over.
                    if string.is_empty() {
                        return true;
                    }
                    return false;
                }
            }
            b'\\' => {
                if pattern.len() >= 2 {
                    pattern = &pattern[1..];
                }
                if pattern[0] != string[0] {
                    return false;
                }
                string = &string[1..];
            }
            other => {
                if other != string[0] {
                    return false;
                }
                string = &string[1..];
            }
        }
        pattern = &pattern[1..];
        if string.is_empty() {
            while at(pattern, 0) == b'*' && !pattern.is_empty() {
                pattern = &pattern[1..];
            }
            break;
        }
    }
    pattern.is_empty() && string.is_empty()
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs_match_as_redis_matches_them() {
        let yes = |p: &str, s: &str| assert!(matches(p.as_bytes(), s.as_bytes()), "{p} {s}");
        let no = |p: &str, s: &str| assert!(!matches(p.as_bytes(), s.as_bytes()), "{p} {s}");
        // As in C: an empty string meets a pattern only when both are empty (`KEYS *` and
        // `SCAN MATCH *` skip the matcher, so they still return the empty key).
        no("*", "");
        yes("*", "anything");
        yes("a*", "a");
        yes("lock:*", "lock:a");
        no("lock:*", "lease:a");
        yes("h?llo", "hello");
        no("h?llo", "hllo");
        yes("h[ae]llo", "hallo");
        no("h[ae]llo", "hillo");
        yes("h[^e]llo", "hallo");
        no("h[^e]llo", "hello");
        yes("h[a-b]llo", "hbllo");
        yes("h[b-a]llo", "hbllo");
        yes("a\\*b", "a*b");
        no("a\\*b", "axb");
        yes("a**b", "ab");
        yes("*a*b*c*", "xxaxxbxxcxx");
        no("*a*b*c*", "xxaxxcxxbxx");
        yes("", "");
        no("", "a");
        no("a", "");
        // An unclosed class matches its byte and ends the pattern.
        yes("a[b", "ab");
        no("a[b", "abc");
    }

    #[test]
    fn many_stars_end_without_exhausting_the_stack() {
        let pattern = "*a".repeat(100_000) + "b";
        assert!(!matches(pattern.as_bytes(), &[b'a'; 2_000]));
    }
}
