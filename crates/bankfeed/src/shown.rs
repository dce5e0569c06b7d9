//! How values appear in messages and log lines: cut to a length, quoted and escaped, URLs without
//! what may be a secret. A leaf of the core: everything may use it, it uses nothing of the crate.

/// The first `max` characters of `text`, cut on a character boundary.
pub(crate) fn snippet(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// How many characters of a refused value a message shows.
pub const SHOWN_CHARS: usize = 40;

/// A refused value that is not a secret, for a message: quoted and escaped (`{:?}`, so a line
/// break shows as `\n`), its first [`SHOWN_CHARS`] characters and an ellipsis past them.
pub fn shown(value: &str) -> String {
    shown_with(value, SHOWN_CHARS)
}

/// A refused URL as a message shows it ([`shown`]), without what may be a secret: the user info
/// (`user:password@`, kept as `…@`), the query and the fragment (a token, say) are left out.
pub(crate) fn shown_url(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    let after_scheme = without_query.find("://").map_or(0, |at| at + 3);
    let shown = match (without_query.rfind('@'), without_query.get(..after_scheme)) {
        (Some(at), Some(scheme)) if at >= after_scheme => {
            format!("{scheme}…{}", without_query.get(at..).unwrap_or_default())
        }
        _ => without_query.to_owned(),
    };
    self::shown(&shown)
}

/// How much of a body an error keeps.
const SNIPPET_CHARS: usize = 200;

/// The start of `bytes` as text, for an error message.
pub(crate) fn body_snippet(bytes: &[u8]) -> String {
    snippet(&String::from_utf8_lossy(bytes), SNIPPET_CHARS)
}

/// How many characters of an HTML page's title a message shows.
const TITLE_CHARS: usize = 100;

/// What a message says of `text` when it is an HTML page rather than the service's JSON: its
/// title (or first heading), on one line and cut. A proxy or gateway in front of the service
/// answers 502 or 504 with such a page; its markup quoted in the message would hide the one
/// line that matters ("502 Bad Gateway"), and the whole page stays on the error's body.
/// `None` when `text` is not a page: it is then quoted as it came.
pub(crate) fn html_page(text: &str) -> Option<String> {
    let start = text.trim_start().get(..14).unwrap_or(text.trim_start()).to_ascii_lowercase();
    if !(start.starts_with("<!doctype html") || start.starts_with("<html") || start.starts_with("<head")) {
        return None;
    }
    let inside = |tag: &str| {
        let lower = text.to_ascii_lowercase();
        let open = lower.find(&format!("<{tag}"))?;
        let from = open + lower.get(open..)?.find('>')? + 1;
        let to = from + lower.get(from..)?.find(&format!("</{tag}"))?;
        let words = text.get(from..to)?.split_whitespace().collect::<Vec<_>>().join(" ");
        (!words.is_empty()).then_some(words)
    };
    let title = inside("title").or_else(|| inside("h1"));
    Some(match title {
        Some(title) => format!("an HTML page titled {}", shown_with(&title, TITLE_CHARS)),
        None => "an HTML page".to_owned(),
    })
}

/// [`shown`] with its own length.
fn shown_with(value: &str, max: usize) -> String {
    match value.char_indices().nth(max) {
        Some((end, _)) => format!("{:?}…", value.get(..end).unwrap_or(value)),
        None => format!("{value:?}"),
    }
}

/// Seconds as a message shows them: to the millisecond under a second (a short `deadline` or
/// `poll_timeout` would otherwise read "after 0.0 s"), to the tenth above.
pub(crate) struct Seconds(pub std::time::Duration);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seconds = self.0.as_secs_f64();
        if seconds < 1.0 {
            write!(f, "{seconds:.3} s")
        } else {
            write!(f, "{seconds:.1} s")
        }
    }
}
