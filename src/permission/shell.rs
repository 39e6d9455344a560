//! A shell command flattened into what the gate judges: every simple command
//! (also those inside substitutions, subshells, loops and functions) and every
//! redirection. Built on `brush-parser`; anything it cannot read is reported
//! as a parse error so the gate asks instead of guessing.

use brush_parser::ast;
use brush_parser::word::{
    Parameter, ParameterExpr, ParameterTransformOp, WordPiece, WordPieceWithSource,
};

use super::shell_words::{brace_alternatives, literal_text};
use brush_parser::{Parser, ParserOptions};

/// Nested shells, substitutions inside substitutions, ... beyond this depth
/// the command is treated as unreadable.
const MAX_DEPTH: usize = 16;

/// Device files whose use as a redirection target writes nothing.
pub const HARMLESS_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShellAnalysis {
    /// In source order; commands inside a substitution come after the
    /// command whose word holds the substitution.
    pub commands: Vec<SimpleCommand>,
    pub redirects: Vec<Redirect>,
    /// `$(…)`, backticks or `<(…)` / `>(…)` somewhere in the command.
    pub has_substitution: bool,
    /// Words that are no command's arguments but may name paths: the
    /// values of `for x in …` and the subject of `case … in`. The flag
    /// tells whether the word is literal.
    pub loose_words: Vec<(String, bool)>,
    /// Functions defined by the command.
    pub functions: Vec<FunctionDef>,
    /// Parts the analysis could not see into (arithmetic or parameter
    /// expansions holding substitutions, ...). Non-empty means "ask".
    pub opaque: Vec<String>,
    /// Places where bash evaluates text it only knows when it runs as
    /// arithmetic or as a variable name (`$((x))`, `${a[i]}`, `${x:n}`,
    /// `${!x}`, `${x@P}`): a value like `a[$(cmd)]` there runs `cmd`.
    /// Never read-only.
    pub evaluated: Vec<String>,
    /// For each shell the command runs (0 is the top one; subshells,
    /// pipeline stages, substitutions, background jobs and function bodies
    /// get their own), the shell it was started from.
    pub scopes: Vec<Option<usize>>,
    /// The parser failed; nothing else in the analysis is trustworthy.
    pub parse_error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimpleCommand {
    /// The command name and its arguments, de-quoted where literal; a word
    /// with expansions keeps its source text (`$HOME`, `$(date)`).
    pub words: Vec<String>,
    /// `literal[i]` is false when `words[i]` depends on an expansion.
    pub literal: Vec<bool>,
    /// Leading `NAME=value` assignments, as written.
    pub assignments: Vec<String>,
    /// Index (in `ShellAnalysis::commands`) of the command whose word or
    /// redirection holds the substitution this command runs in.
    pub parent: Option<usize>,
    /// (pipeline id, stage) of the innermost multi-stage pipeline this
    /// command belongs to; commands in a substitution inherit their
    /// parent's stage.
    pub pipe: Option<(usize, usize)>,
    /// The shell (`ShellAnalysis::scopes`) the command runs in.
    pub scope: usize,
}

impl SimpleCommand {
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }

    /// The command as one line of de-quoted words.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// What bash rules match: the words, preceded by any assignment that
    /// could change what runs (`LD_PRELOAD=x.so cargo test` is not
    /// `cargo test`).
    pub fn rule_text(&self) -> String {
        let standalone = self.words.is_empty();
        let mut parts: Vec<&str> = self
            .assignments
            .iter()
            .filter(|a| !super::readonly::is_safe_assignment(a, standalone))
            .map(String::as_str)
            .collect();
        parts.extend(self.words.iter().map(String::as_str));
        parts.join(" ")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    /// `>`, `>>`, `>|`, `<`, `<>`, `>&`, `<&`, `&>`, `&>>`, `<<`, `<<<`.
    pub operator: String,
    pub fd: Option<i32>,
    /// File name, fd number or here-document delimiter.
    pub target: String,
    pub target_literal: bool,
    /// True when a file (not a harmless device or a file descriptor) may be
    /// created or changed.
    pub writes_file: bool,
    /// The command the redirection belongs to, when it belongs to one.
    pub command: Option<usize>,
    /// The text a here-document (`<<`) or here-string (`<<<`) feeds in.
    pub input: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    /// Indices of the commands in the body.
    pub body: Vec<usize>,
}

impl ShellAnalysis {
    /// Whether the analysis can be trusted to list everything the command runs.
    pub fn is_complete(&self) -> bool {
        self.parse_error.is_none() && self.opaque.is_empty()
    }

    /// Redirections that may write a file.
    pub fn file_writes(&self) -> impl Iterator<Item = &Redirect> {
        self.redirects.iter().filter(|r| r.writes_file)
    }
}

/// Parse `command` into its flat analysis. Never panics; on failure
/// `parse_error` is set.
pub fn parse(command: &str) -> ShellAnalysis {
    // The parser crate can panic on some malformed input (an unwrap in its
    // tokenizer). A command comes from the model, so that must not take
    // the agent down: a panic is an unparseable command, which asks. The
    // panic hooks stay quiet for it (see `panic_is_expected`).
    EXPECTING_PANIC.with(|f| f.set(true));
    let result = std::panic::catch_unwind(|| parse_inner(command));
    EXPECTING_PANIC.with(|f| f.set(false));
    result.unwrap_or_else(|_| ShellAnalysis {
        parse_error: Some("the command could not be parsed".into()),
        ..ShellAnalysis::default()
    })
}

thread_local! {
    static EXPECTING_PANIC: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on a thread inside [`parse`], where a panic from the parser crate
/// is caught and handled: panic hooks should neither print nor restore
/// the terminal for it.
pub fn panic_is_expected() -> bool {
    EXPECTING_PANIC.with(|f| f.get())
}

fn parse_inner(command: &str) -> ShellAnalysis {
    if let Some(why) = parser_trap(command) {
        return ShellAnalysis {
            parse_error: Some(why),
            ..ShellAnalysis::default()
        };
    }
    let mut walker = Walker::default();
    walker.out.scopes.push(None);
    let top = Ctx {
        parent: None,
        pipe: None,
        depth: 0,
        scope: 0,
    };
    if let Err(e) = walker.program(command, top) {
        walker.out.parse_error = Some(e);
    }
    walker.out
}

/// Input the parser crate never returns from: it loops, allocating, on
/// some here-documents whose delimiter holds `$((` (`<<x$(( ||$((`) or is
/// empty (`<<""<( `, `<< );;`). bash has no use for such delimiters (an
/// expansion in one is never expanded; an empty one ends at the first
/// empty line or is a syntax error), so refusing them loses nothing.
fn parser_trap(command: &str) -> Option<String> {
    for at in unquoted_heredoc_operators(command) {
        let after = &command[at + 2..];
        let delimiter = after
            .strip_prefix('-')
            .unwrap_or(after)
            .trim_start_matches([' ', '\t']);
        let end = delimiter
            .find(|c: char| c.is_whitespace() || ";&|<>()".contains(c))
            .unwrap_or(delimiter.len());
        let word = &delimiter[..end];
        if word.contains(['$', '`']) || word.replace(['\'', '"'], "").is_empty() {
            return Some(
                "cannot parse the command: a here-document delimiter is empty or holds an \
                 expansion"
                    .into(),
            );
        }
    }
    None
}

/// Byte offsets of `<<` (not `<<<`) outside quotes.
fn unquoted_heredoc_operators(command: &str) -> Vec<usize> {
    let bytes = command.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(b'\'') if b == b'\'' => quote = None,
            Some(b'"') if b == b'\\' => i += 1,
            Some(b'"') if b == b'"' => quote = None,
            Some(_) => {}
            None if b == b'\\' => i += 1,
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if bytes[i..].starts_with(b"<<<") => i += 2,
            None if bytes[i..].starts_with(b"<<") => {
                out.push(i);
                i += 1;
            }
            None => {}
        }
        i += 1;
    }
    out
}

pub(super) fn options() -> ParserOptions {
    ParserOptions::default()
}

#[derive(Default)]
struct Walker {
    out: ShellAnalysis,
    next_pipe: usize,
}

/// Where new commands hang: the command holding the substitution and the
/// pipeline stage they inherit.
#[derive(Clone, Copy)]
struct Ctx {
    parent: Option<usize>,
    pipe: Option<(usize, usize)>,
    depth: usize,
    scope: usize,
}

type Walk = Result<(), String>;

impl Walker {
    fn program(&mut self, text: &str, ctx: Ctx) -> Walk {
        if ctx.depth > MAX_DEPTH {
            return Err("the command nests too deeply to inspect".into());
        }
        let reader = std::io::BufReader::new(text.as_bytes());
        let mut parser = Parser::new(reader, &options());
        let program = parser
            .parse_program()
            .map_err(|e| format!("cannot parse the command: {e}"))?;
        for complete in &program.complete_commands {
            self.compound_list(complete, ctx)?;
        }
        Ok(())
    }

    /// A subshell: a `cd` inside it does not outlast it.
    fn new_scope(&mut self, ctx: Ctx) -> Ctx {
        self.out.scopes.push(Some(ctx.scope));
        Ctx {
            scope: self.out.scopes.len() - 1,
            ..ctx
        }
    }

    fn compound_list(&mut self, list: &ast::CompoundList, ctx: Ctx) -> Walk {
        for item in &list.0 {
            // `cmd &` runs in a subshell of its own.
            let ctx = match item.1 {
                ast::SeparatorOperator::Async => self.new_scope(ctx),
                ast::SeparatorOperator::Sequence => ctx,
            };
            self.and_or(&item.0, ctx)?;
        }
        Ok(())
    }

    fn and_or(&mut self, list: &ast::AndOrList, ctx: Ctx) -> Walk {
        self.pipeline(&list.first, ctx)?;
        for next in &list.additional {
            match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, ctx)?,
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, ctx: Ctx) -> Walk {
        if pipeline.seq.len() < 2 {
            for command in &pipeline.seq {
                self.command(command, ctx)?;
            }
            return Ok(());
        }
        let id = self.next_pipe;
        self.next_pipe += 1;
        for (stage, command) in pipeline.seq.iter().enumerate() {
            let inner = Ctx {
                pipe: Some((id, stage)),
                ..self.new_scope(ctx)
            };
            self.command(command, inner)?;
        }
        Ok(())
    }

    fn command(&mut self, command: &ast::Command, ctx: Ctx) -> Walk {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, ctx),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, ctx)?;
                self.redirect_list(redirects.as_ref(), None, ctx)
            }
            ast::Command::Function(def) => {
                let first = self.out.commands.len();
                let ctx = self.new_scope(ctx);
                self.compound(&def.body.0, ctx)?;
                self.redirect_list(def.body.1.as_ref(), None, ctx)?;
                let body = (first..self.out.commands.len()).collect();
                self.out.functions.push(FunctionDef {
                    name: def.fname.value.clone(),
                    body,
                });
                Ok(())
            }
            ast::Command::ExtendedTest(test, redirects) => {
                // Judged like a command named `[[`: its words can make bash
                // evaluate code (`-v 'a[$(…)]'`, `$x -eq 1`).
                let (index, inner) = self.open_command(ctx);
                self.test_token(index, "[[");
                self.extended_test(&test.expr, index, inner)?;
                self.test_token(index, "]]");
                self.redirect_list(redirects.as_ref(), Some(index), ctx)
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, ctx: Ctx) -> Walk {
        use ast::CompoundCommand as C;
        match compound {
            C::Arithmetic(a) => self.arithmetic(&a.expr.value),
            C::ArithmeticForClause(f) => {
                for expr in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&expr.value)?;
                }
                self.compound_list(&f.body.list, ctx)
            }
            C::BraceGroup(b) => self.compound_list(&b.list, ctx),
            C::Subshell(s) => {
                let inner = self.new_scope(ctx);
                self.compound_list(&s.list, inner)
            }
            C::ForClause(f) => {
                for word in f.values.iter().flatten() {
                    let alternatives = match brace_alternatives(&word.value) {
                        Ok(Some(alternatives)) => alternatives,
                        _ => vec![word.value.clone()],
                    };
                    for alternative in alternatives {
                        let loose = self.word(&alternative, ctx)?;
                        self.out.loose_words.push(loose);
                    }
                }
                self.compound_list(&f.body.list, ctx)
            }
            C::CaseClause(c) => {
                let loose = self.word(&c.value.value, ctx)?;
                self.out.loose_words.push(loose);
                for item in &c.cases {
                    for pattern in &item.patterns {
                        self.word(&pattern.value, ctx)?;
                    }
                    if let Some(body) = &item.cmd {
                        self.compound_list(body, ctx)?;
                    }
                }
                Ok(())
            }
            C::IfClause(i) => {
                self.compound_list(&i.condition, ctx)?;
                self.compound_list(&i.then, ctx)?;
                for branch in i.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.compound_list(condition, ctx)?;
                    }
                    self.compound_list(&branch.body, ctx)?;
                }
                Ok(())
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.compound_list(&w.0, ctx)?;
                self.compound_list(&w.1.list, ctx)
            }
            C::Coprocess(c) => self.command(&c.body, ctx),
        }
    }

    fn test_token(&mut self, index: usize, token: &str) {
        let cmd = &mut self.out.commands[index];
        cmd.words.push(token.to_string());
        cmd.literal.push(true);
    }

    fn test_word(&mut self, index: usize, raw: &str, ctx: Ctx) -> Walk {
        let (text, literal) = self.word(raw, ctx)?;
        let cmd = &mut self.out.commands[index];
        cmd.words.push(text);
        cmd.literal.push(literal);
        Ok(())
    }

    /// Flatten `[[ … ]]` into the words of command `index`.
    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, index: usize, ctx: Ctx) -> Walk {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, index, ctx)?;
                self.test_token(
                    index,
                    if matches!(expr, E::And(..)) {
                        "&&"
                    } else {
                        "||"
                    },
                );
                self.extended_test(b, index, ctx)
            }
            E::Not(a) => {
                self.test_token(index, "!");
                self.extended_test(a, index, ctx)
            }
            E::Parenthesized(a) => {
                self.test_token(index, "(");
                self.extended_test(a, index, ctx)?;
                self.test_token(index, ")");
                Ok(())
            }
            E::UnaryTest(predicate, w) => {
                self.test_token(index, &predicate.to_string());
                self.test_word(index, &w.value, ctx)
            }
            E::BinaryTest(predicate, a, b) => {
                self.test_word(index, &a.value, ctx)?;
                self.test_token(index, &predicate.to_string());
                self.test_word(index, &b.value, ctx)
            }
        }
    }

    /// Arithmetic text is expanded by bash before evaluation; a
    /// substitution hidden there is not worth modelling.
    fn arithmetic(&mut self, text: &str) -> Walk {
        if text.contains("$(") || text.contains('`') {
            self.out
                .opaque
                .push(format!("a command substitution inside arithmetic: {text}"));
        }
        if names_something(text) {
            self.out.evaluated.push(format!("$(( {} ))", text.trim()));
        }
        Ok(())
    }

    /// Starts a new simple command where `ctx` stands; its index and the
    /// context for what is nested in it.
    fn open_command(&mut self, ctx: Ctx) -> (usize, Ctx) {
        let index = self.out.commands.len();
        self.out.commands.push(SimpleCommand {
            parent: ctx.parent,
            pipe: ctx.pipe,
            scope: ctx.scope,
            ..SimpleCommand::default()
        });
        let inner = Ctx {
            parent: Some(index),
            ..ctx
        };
        (index, inner)
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, ctx: Ctx) -> Walk {
        let (index, inner) = self.open_command(ctx);
        let prefix = simple.prefix.iter().flat_map(|p| p.0.iter());
        let suffix = simple.suffix.iter().flat_map(|s| s.0.iter());
        let mut items: Vec<Item<'_>> = prefix.map(Item::Part).collect();
        if let Some(word) = &simple.word_or_name {
            items.push(Item::Word(word));
        }
        items.extend(suffix.map(Item::Part));

        for item in items {
            use ast::CommandPrefixOrSuffixItem as P;
            match item {
                Item::Word(word) | Item::Part(P::Word(word)) => {
                    self.argument(&word.value, index, inner)?;
                }
                Item::Part(P::AssignmentWord(assignment, word)) => {
                    if self.out.commands[index].words.is_empty() {
                        self.assignment(assignment, inner)?;
                        self.out.commands[index]
                            .assignments
                            .push(word.value.clone());
                    } else {
                        // After the command name (`export X=1`) it is an argument.
                        self.argument(&word.value, index, inner)?;
                    }
                }
                Item::Part(P::IoRedirect(redirect)) => {
                    self.redirect(redirect, Some(index), inner)?;
                }
                Item::Part(P::ProcessSubstitution(kind, subshell)) => {
                    self.out.has_substitution = true;
                    let sub = self.new_scope(deeper(inner)?);
                    self.compound_list(&subshell.list, sub)?;
                    let marker = match kind {
                        ast::ProcessSubstitutionKind::Read => "<(…)",
                        ast::ProcessSubstitutionKind::Write => ">(…)",
                    };
                    let cmd = &mut self.out.commands[index];
                    cmd.words.push(marker.into());
                    cmd.literal.push(false);
                }
            }
        }
        Ok(())
    }

    /// Add one argument (several after brace expansion) to command `index`.
    fn argument(&mut self, raw: &str, index: usize, ctx: Ctx) -> Walk {
        let alternatives = match brace_alternatives(raw) {
            Ok(Some(alternatives)) => alternatives,
            Ok(None) => vec![raw.to_string()],
            Err(why) => {
                self.out.opaque.push(why);
                vec![raw.to_string()]
            }
        };
        for alternative in alternatives {
            let (text, literal) = self.word(&alternative, ctx)?;
            let cmd = &mut self.out.commands[index];
            cmd.words.push(text);
            cmd.literal.push(literal);
        }
        Ok(())
    }

    fn assignment(&mut self, assignment: &ast::Assignment, ctx: Ctx) -> Walk {
        match &assignment.value {
            ast::AssignmentValue::Scalar(w) => self.word(&w.value, ctx).map(|_| ()),
            ast::AssignmentValue::Array(items) => {
                for (key, value) in items {
                    if let Some(key) = key {
                        self.word(&key.value, ctx)?;
                    }
                    self.word(&value.value, ctx)?;
                }
                Ok(())
            }
        }
    }

    fn redirect_list(
        &mut self,
        list: Option<&ast::RedirectList>,
        command: Option<usize>,
        ctx: Ctx,
    ) -> Walk {
        for redirect in list.iter().flat_map(|l| l.0.iter()) {
            self.redirect(redirect, command, ctx)?;
        }
        Ok(())
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect, command: Option<usize>, ctx: Ctx) -> Walk {
        use ast::IoFileRedirectKind as K;
        use ast::IoFileRedirectTarget as T;
        let mut input = None;
        let (operator, fd, target, literal, writes) = match redirect {
            ast::IoRedirect::File(fd, kind, target) => {
                let operator = kind.to_string();
                let writes = matches!(kind, K::Write | K::Append | K::Clobber | K::ReadAndWrite);
                match target {
                    T::Filename(w) => {
                        let (text, literal) = self.word(&w.value, ctx)?;
                        (operator, *fd, text, literal, writes)
                    }
                    T::Fd(n) => (operator, *fd, n.to_string(), true, false),
                    T::Duplicate(w) => {
                        let (text, literal) = self.word(&w.value, ctx)?;
                        // `>&file` writes a file; `>&2` / `>&-` only juggle fds.
                        let is_fd = literal && (text == "-" || text.parse::<i32>().is_ok());
                        let writes = matches!(kind, K::DuplicateOutput) && !is_fd;
                        (operator, *fd, text, literal, writes)
                    }
                    T::ProcessSubstitution(_, subshell) => {
                        self.out.has_substitution = true;
                        let sub = self.new_scope(deeper(ctx)?);
                        self.compound_list(&subshell.list, sub)?;
                        (operator, *fd, "(…)".to_string(), false, false)
                    }
                }
            }
            ast::IoRedirect::OutputAndError(w, append) => {
                let (text, literal) = self.word(&w.value, ctx)?;
                let operator = if *append { "&>>" } else { "&>" };
                (operator.to_string(), None, text, literal, true)
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                if doc.requires_expansion {
                    let pieces = brush_parser::word::parse_heredoc(&doc.doc.value, &options())
                        .map_err(|e| format!("cannot parse a here-document: {e}"))?;
                    self.pieces(&pieces, ctx)?;
                }
                input = Some(doc.doc.value.clone());
                let delimiter = doc.here_end.value.clone();
                ("<<".to_string(), *fd, delimiter, true, false)
            }
            ast::IoRedirect::HereString(fd, w) => {
                let (text, literal) = self.word(&w.value, ctx)?;
                input = Some(text.clone());
                ("<<<".to_string(), *fd, text, literal, false)
            }
        };
        let writes_file = writes && !(literal && HARMLESS_DEVICES.contains(&target.as_str()));
        self.out.redirects.push(Redirect {
            operator,
            fd,
            target,
            target_literal: literal,
            writes_file,
            command,
            input,
        });
        Ok(())
    }

    /// De-quote `raw`, walking any substitutions inside it. Returns the
    /// word's text and whether it is literal.
    fn word(&mut self, raw: &str, ctx: Ctx) -> Result<(String, bool), String> {
        let pieces = brush_parser::word::parse(raw, &options())
            .map_err(|e| format!("cannot parse the word `{raw}`: {e}"))?;
        let literal = self.pieces(&pieces, ctx)?;
        if literal {
            let mut text = String::new();
            literal_text(&pieces, &mut text);
            Ok((text, true))
        } else {
            Ok((raw.to_string(), false))
        }
    }

    /// Walk word pieces; true when all of them are literal.
    fn pieces(&mut self, pieces: &[WordPieceWithSource], ctx: Ctx) -> Result<bool, String> {
        let mut literal = true;
        for piece in pieces {
            match &piece.piece {
                WordPiece::Text(_)
                | WordPiece::SingleQuotedText(_)
                | WordPiece::AnsiCQuotedText(_)
                | WordPiece::EscapeSequence(_) => {}
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    literal &= self.pieces(inner, ctx)?;
                }
                WordPiece::TildeExpansion(_) => literal = false,
                WordPiece::ParameterExpansion(expr) => {
                    literal = false;
                    self.parameter(expr)?;
                }
                WordPiece::CommandSubstitution(text)
                | WordPiece::BackquotedCommandSubstitution(text) => {
                    literal = false;
                    self.out.has_substitution = true;
                    let inner = self.new_scope(deeper(ctx)?);
                    self.program(text, inner)?;
                }
                WordPiece::ArithmeticExpression(expr) => {
                    literal = false;
                    self.arithmetic(&expr.value)?;
                }
            }
        }
        Ok(literal)
    }

    /// `${x:-$(cmd)}` runs `cmd`; such forms are rare enough to refuse to
    /// judge rather than model.
    fn parameter(&mut self, expr: &ParameterExpr) -> Walk {
        let text = format!("{expr:?}");
        if text.contains("$(") || text.contains('`') {
            self.out
                .opaque
                .push("a command substitution inside a parameter expansion".into());
        }
        use ParameterExpr as P;
        let (parameter, indirect) = match expr {
            P::Parameter {
                parameter,
                indirect,
            }
            | P::UseDefaultValues {
                parameter,
                indirect,
                ..
            }
            | P::AssignDefaultValues {
                parameter,
                indirect,
                ..
            }
            | P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                ..
            }
            | P::UseAlternativeValue {
                parameter,
                indirect,
                ..
            }
            | P::ParameterLength {
                parameter,
                indirect,
            }
            | P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                ..
            }
            | P::Substring {
                parameter,
                indirect,
                ..
            }
            | P::Transform {
                parameter,
                indirect,
                ..
            }
            | P::UppercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::ReplaceSubstring {
                parameter,
                indirect,
                ..
            } => (Some(parameter), *indirect),
            P::VariableNames { .. } | P::MemberKeys { .. } => (None, false),
        };
        if indirect {
            self.out
                .evaluated
                .push(format!("an indirect expansion of `{}`", shown(parameter)));
        }
        if let Some(Parameter::NamedWithIndex { name, index }) = parameter
            && !index
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == ' ')
        {
            self.out.evaluated.push(format!("${{{name}[{index}]}}"));
        }
        if let P::Substring { offset, length, .. } = expr {
            for part in std::iter::once(offset).chain(length.as_ref()) {
                self.arithmetic(&part.value)?;
            }
        }
        if let P::Transform {
            op: ParameterTransformOp::PromptExpand,
            ..
        } = expr
        {
            self.out
                .evaluated
                .push(format!("a prompt expansion of `{}`", shown(parameter)));
        }
        Ok(())
    }
}

/// Whether arithmetic text refers to a variable (whose value bash would
/// evaluate in turn), beyond numbers and `${#name}` lengths.
fn names_something(text: &str) -> bool {
    let mut rest = text.to_string();
    while let Some(at) = rest.find("${#") {
        let end = rest[at..].find('}').map_or(rest.len(), |e| at + e + 1);
        rest.replace_range(at..end, "0");
    }
    rest.chars().any(|c| c.is_ascii_alphabetic() || c == '_')
}

fn shown(parameter: Option<&Parameter>) -> String {
    parameter.map(|p| p.to_string()).unwrap_or_default()
}

enum Item<'a> {
    Word(&'a ast::Word),
    Part(&'a ast::CommandPrefixOrSuffixItem),
}

fn deeper(ctx: Ctx) -> Result<Ctx, String> {
    if ctx.depth >= MAX_DEPTH {
        return Err("the command nests too deeply to inspect".into());
    }
    Ok(Ctx {
        depth: ctx.depth + 1,
        ..ctx
    })
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
