//! The walk over brush-parser's syntax tree that fills a [`ShellAnalysis`].

use brush_parser::Parser;
use brush_parser::ast;

use super::HARMLESS_DEVICES;
use super::words::brace_alternatives;
use super::{FunctionDef, MAX_DEPTH, Redirect, ShellAnalysis, SimpleCommand, options};

/// Walk `command` (already past the parser traps) into its analysis.
pub(super) fn walk(command: &str) -> ShellAnalysis {
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

#[derive(Default)]
pub(super) struct Walker {
    pub(super) out: ShellAnalysis,
    next_pipe: usize,
}

/// Where new commands hang: the command holding the substitution and the
/// pipeline stage they inherit.
#[derive(Clone, Copy)]
pub(super) struct Ctx {
    parent: Option<usize>,
    pipe: Option<(usize, usize)>,
    depth: usize,
    scope: usize,
}

pub(super) type Walk = Result<(), String>;

impl Walker {
    pub(super) fn program(&mut self, text: &str, ctx: Ctx) -> Walk {
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
    pub(super) fn new_scope(&mut self, ctx: Ctx) -> Ctx {
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
}

enum Item<'a> {
    Word(&'a ast::Word),
    Part(&'a ast::CommandPrefixOrSuffixItem),
}

pub(super) fn deeper(ctx: Ctx) -> Result<Ctx, String> {
    if ctx.depth >= MAX_DEPTH {
        return Err("the command nests too deeply to inspect".into());
    }
    Ok(Ctx {
        depth: ctx.depth + 1,
        ..ctx
    })
}
