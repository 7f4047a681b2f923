//! Where a value sits in a RON text: an index from field paths (`material.mass`, `pins[3]`,
//! `colliders[0].radius`) to lines and columns, built by a small scanner of RON's structure (strings,
//! comments, brackets, `key:` fields). The scene file uses it both ways: for an error found after
//! parsing (a pin out of range, an OBJ that does not load) it finds the field's line; for ron's own
//! errors, which give a line but not always the field (`Expected integer but found a string`), it finds
//! the field at that position. Best effort on broken text: whatever was scanned before the break is
//! indexed.

/// A 1-based line and column; columns count characters, as ron's do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
}

/// One value: its path and where it starts (at its key, for a struct field) and ends.
#[derive(Clone, Debug)]
struct Entry {
    path: String,
    start: Pos,
    end: Pos,
}

/// The paths of every value of a RON text, with their positions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Open(char),
    Close,
    Colon,
    Comma,
    Ident(String),
    Atom,
}

#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    start: Pos,
    end: Pos,
}

impl Index {
    /// Scans `text`.
    pub(crate) fn new(text: &str) -> Index {
        let toks = tokenize(text);
        let mut p = Parser { toks: &toks, i: 0, out: Vec::new() };
        p.value("", None);
        Index { entries: p.out }
    }

    /// Where the value at `path` starts; for a path the text does not have (a missing field), where its
    /// longest present parent starts; `None` when not even the first component is there.
    pub(crate) fn find(&self, path: &str) -> Option<Pos> {
        let mut p = path;
        loop {
            if let Some(e) = self.entries.iter().find(|e| e.path == p) {
                return Some(e.start);
            }
            let cut = p.rfind(['.', '['])?;
            p = &p[..cut];
        }
    }

    /// The path of the innermost value at `pos` ("" for the whole text).
    pub(crate) fn path_at(&self, pos: Pos) -> &str {
        self.entries
            .iter()
            .filter(|e| e.start <= pos && pos <= e.end)
            .max_by_key(|e| (e.start, e.path.len()))
            .map(|e| e.path.as_str())
            .unwrap_or("")
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

struct Parser<'a> {
    toks: &'a [Tok],
    i: usize,
    out: Vec<Entry>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Kind> {
        self.toks.get(self.i).map(|t| &t.kind)
    }

    fn last_end(&self) -> Pos {
        self.toks.get(self.i.saturating_sub(1)).map(|t| t.end).unwrap_or_default()
    }

    /// One value at `path`; `start` overrides where it starts (at its key). Always consumes a token
    /// unless at a closing bracket or the end.
    fn value(&mut self, path: &str, start: Option<Pos>) {
        let Some(tok) = self.toks.get(self.i) else { return };
        let begin = start.unwrap_or(tok.start);
        match &tok.kind {
            Kind::Close => return,
            Kind::Ident(name) => {
                let some = name == "Some";
                self.i += 1;
                if self.peek() == Some(&Kind::Open('(')) {
                    if some {
                        // Some(x): the option's value is the field's
                        self.i += 1;
                        self.value(path, Some(begin));
                        if self.peek() == Some(&Kind::Close) {
                            self.i += 1;
                        }
                    } else {
                        self.group(path);
                    }
                }
            }
            Kind::Open('(') => self.group(path),
            Kind::Open(_) => self.seq(path),
            Kind::Colon | Kind::Comma | Kind::Atom => self.i += 1,
        }
        self.out.push(Entry { path: path.to_string(), start: begin, end: self.last_end() });
    }

    /// `( ... )`: a struct's fields (`key: value`) or a tuple's members (`path[i]`).
    fn group(&mut self, path: &str) {
        self.i += 1; // '('
        let fields = matches!(self.peek(), Some(Kind::Ident(_))) && self.toks.get(self.i + 1).map(|t| &t.kind) == Some(&Kind::Colon);
        let mut n = 0;
        loop {
            match self.peek() {
                None => return,
                Some(Kind::Close) => {
                    self.i += 1;
                    return;
                }
                Some(Kind::Comma) => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let (key_start, key) = match (&self.toks[self.i].kind, self.toks.get(self.i + 1).map(|t| &t.kind)) {
                (Kind::Ident(k), Some(Kind::Colon)) if fields => (self.toks[self.i].start, Some(k.clone())),
                _ => (self.toks[self.i].start, None),
            };
            match key {
                Some(k) => {
                    self.i += 2;
                    self.value(&join(path, &k), Some(key_start));
                }
                None => {
                    self.value(&format!("{path}[{n}]"), None);
                    n += 1;
                }
            }
        }
    }

    /// `[ ... ]` or `{ ... }`: members `path[i]` (a map's keys and values both count).
    fn seq(&mut self, path: &str) {
        self.i += 1;
        let mut n = 0;
        loop {
            match self.peek() {
                None => return,
                Some(Kind::Close) => {
                    self.i += 1;
                    return;
                }
                Some(Kind::Comma | Kind::Colon) => self.i += 1,
                _ => {
                    self.value(&format!("{path}[{n}]"), None);
                    n += 1;
                }
            }
        }
    }
}

/// RON's tokens, with comments, whitespace and `#![enable(...)]` attributes dropped.
fn tokenize(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    // the position of every character (and one past the end)
    let mut pos = Vec::with_capacity(c.len() + 1);
    let (mut line, mut col) = (1, 1);
    for &ch in &c {
        pos.push(Pos { line, col });
        if ch == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    pos.push(Pos { line, col });
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut toks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let start = i;
        let kind = if ch.is_whitespace() {
            i += 1;
            None
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            None
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0usize;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            None
        } else if ch == '#' {
            // #![enable(...)]
            let mut depth = 0usize;
            while i < c.len() {
                match c[i] {
                    '[' => depth += 1,
                    ']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        } else if ch == '"' || ((ch == 'b') && at(i + 1) == '"') {
            i += if ch == 'b' { 2 } else { 1 };
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            Some(Kind::Atom)
        } else if (ch == 'r' || (ch == 'b' && at(i + 1) == 'r')) && {
            let j = if ch == 'b' { i + 2 } else { i + 1 };
            let mut k = j;
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        } {
            // raw string r#"..."#
            i += if ch == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(i) == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            Some(Kind::Atom)
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            i += if ch == 'b' { 2 } else { 1 };
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            Some(Kind::Atom)
        } else if ch.is_alphabetic() || ch == '_' {
            if ch == 'r' && at(i + 1) == '#' {
                i += 2;
            }
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            Some(Kind::Ident(c[s..i].iter().collect()))
        } else if ch.is_ascii_digit() || matches!(ch, '+' | '-' | '.') {
            i += 1;
            while i < c.len()
                && (c[i].is_alphanumeric() || matches!(c[i], '.' | '_') || (matches!(c[i], '+' | '-') && matches!(c[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            Some(Kind::Atom)
        } else {
            i += 1;
            Some(match ch {
                '(' | '[' | '{' => Kind::Open(ch),
                ')' | ']' | '}' => Kind::Close,
                ':' => Kind::Colon,
                ',' => Kind::Comma,
                _ => Kind::Atom,
            })
        };
        if let Some(kind) = kind {
            let end = i.min(c.len());
            // the end is the last character's position, so that a span that ends on it is inside
            toks.push(Tok { kind, start: pos[start], end: pos[end.saturating_sub(1).max(start)] });
        }
    }
    toks
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"// a comment ( [
(
    about: "a (string) with, commas",
    model: (builder: "rope", size: Some(12)),
    pins: [
        3,
        /* 4, */ 99,
    ],
    colliders: [Sphere(center: (0.0, 1.0, -2e-3), radius: 0.5)],
    camera: Some((eye: (1, 2, 3), target: (0, 0, 0))),
)
"#;

    #[test]
    fn finds_fields_and_elements() {
        let ix = Index::new(TEXT);
        assert_eq!(ix.find("about"), Some(Pos { line: 3, col: 5 }));
        assert_eq!(ix.find("model.size"), Some(Pos { line: 4, col: 30 }));
        assert_eq!(ix.find("pins[1]"), Some(Pos { line: 7, col: 18 }));
        assert_eq!(ix.find("colliders[0].radius"), Some(Pos { line: 9, col: 51 }));
        assert_eq!(ix.find("colliders[0].center[2]"), Some(Pos { line: 9, col: 43 }));
        assert_eq!(ix.find("camera.eye"), Some(Pos { line: 10, col: 19 }));
        // a missing field: its parent
        assert_eq!(ix.find("model.stiffness"), Some(Pos { line: 4, col: 5 }));
        assert_eq!(ix.find("nothing.here"), None);
    }

    #[test]
    fn path_at_a_position() {
        let ix = Index::new(TEXT);
        assert_eq!(ix.path_at(Pos { line: 4, col: 37 }), "model.size");
        assert_eq!(ix.path_at(Pos { line: 7, col: 19 }), "pins[1]");
        assert_eq!(ix.path_at(Pos { line: 9, col: 58 }), "colliders[0].radius");
        assert_eq!(ix.path_at(Pos { line: 1, col: 1 }), "");
    }

    #[test]
    fn broken_text_does_not_loop() {
        for t in ["(", "(a: ", "([,,:", ")))", "(a: [1, (b: \"x", "r#\"", "'", "/* ", "#![", "(a: b: c)"] {
            let ix = Index::new(t);
            let _ = ix.find("a.b");
            let _ = ix.path_at(Pos { line: 1, col: 2 });
        }
    }
}
