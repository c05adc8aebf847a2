//! What one source file says, read with syn: its modules (an inline `mod m { .. }` apart from
//! its file's), the files they declare, their `use` trees and the paths in their code and
//! macro bodies, with every test-only item left out.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::visit::Visit;

/// The heads of a path that starts from a place in the crate rather than from a name.
const HEADS: [&str; 3] = ["crate", "self", "super"];

/// A module's items as the import graph sees them (one file's top-level module, or an inline
/// module inside it).
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// The file modules it declares (`mod x;`, any visibility), in order.
    pub(crate) declared: Vec<Declared>,
    /// Its inline modules (`mod m { .. }`), each with its own scope.
    pub(crate) inline: Vec<(String, Scope)>,
    /// Its `use` items, those inside its functions' bodies too, in order.
    pub(crate) uses: Vec<UseItem>,
    /// The paths of two or more segments in its code and macro bodies (`use` items apart).
    pub(crate) paths: Vec<CodePath>,
    /// Every `crate::`, `self::` or `super::` head with the name after it, `use` items
    /// included: what the module view counts.
    pub(crate) heads: Vec<HeadRef>,
}

/// A `mod x;` declaration.
#[derive(Debug)]
pub(crate) struct Declared {
    /// The module's name.
    pub(crate) name: String,
    /// Its `#[path = ".."]`, if it has one.
    pub(crate) path: Option<String>,
}

/// Where in the file something is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place {
    /// 1-based line.
    pub(crate) line: usize,
    /// 0-based column (orders two things on one line).
    pub(crate) column: usize,
}

/// One `use` item.
#[derive(Debug)]
pub(crate) struct UseItem {
    /// Where its `use` keyword is.
    pub(crate) place: Place,
    /// Each leaf of its tree.
    pub(crate) leaves: Vec<UseLeaf>,
    /// Whether its path starts with `::` (from outside the crate).
    pub(crate) external: bool,
    /// For a `pub use module::..` (after an optional `crate::` or `self::`): the module's name
    /// and the names the item brings in.
    pub(crate) reexport: Option<(String, Vec<String>)>,
}

/// One leaf of a `use` tree: `a::b::c` for `use a::b::{c, ..}`, `a::b` for `a::b::{self}`.
#[derive(Debug, Clone)]
pub(crate) struct UseLeaf {
    /// The segments, the last one `*` for a glob.
    pub(crate) segments: Vec<String>,
    /// The name it is brought in as (`as x`), if renamed.
    pub(crate) alias: Option<String>,
}

/// A path in code: its segments up to the first one with generic arguments.
#[derive(Debug, Clone)]
pub(crate) struct CodePath {
    /// Where its first segment is.
    pub(crate) place: Place,
    /// `crate`, `a`, `B` for `crate::a::B::<T>::new`.
    pub(crate) segments: Vec<String>,
}

/// A `crate::`, `self::` or `super::` head (with any `::super` after it) and the name after
/// it; one per member of a `{..}` group after it.
#[derive(Debug, Clone)]
pub(crate) struct HeadRef {
    /// Where the head is.
    pub(crate) place: Place,
    /// `["super", "super"]` for `super::super::x`.
    pub(crate) head: Vec<String>,
    /// `x` for `super::super::x`.
    pub(crate) first: String,
}

/// Why a file could not be read as Rust.
pub(crate) type ParseError = syn::Error;

/// The top-level scope of a file's code.
pub(crate) fn read_scope(code: &str) -> Result<Scope, ParseError> {
    let file = syn::parse_file(code)?;
    if is_test_only(&file.attrs) {
        return Ok(Scope::default());
    }
    let mut collector = Collector {
        stack: vec![Scope::default()],
    };
    for attr in &file.attrs {
        collector.visit_attribute(attr);
    }
    for item in &file.items {
        collector.visit_item(item);
    }
    Ok(collector.stack.pop().unwrap_or_default())
}

/// Whether the attributes make an item exist only in test builds: `#[cfg(test)]`, or a
/// `cfg` whose predicate cannot hold without `test` (`all(test, ..)`, `any` of such).
pub(crate) fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| implies_test(&meta))
    })
}

fn implies_test(meta: &syn::Meta) -> bool {
    match meta {
        syn::Meta::Path(path) => path.is_ident("test"),
        syn::Meta::List(list) => {
            let args = list.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            );
            let Ok(args) = args else { return false };
            if list.path.is_ident("all") {
                args.iter().any(implies_test)
            } else if list.path.is_ident("any") {
                !args.is_empty() && args.iter().all(implies_test)
            } else {
                false
            }
        }
        syn::Meta::NameValue(_) => false,
    }
}

fn place(span: proc_macro2::Span) -> Place {
    let start = span.start();
    Place {
        line: start.line,
        column: start.column,
    }
}

/// The walk over a file's syntax tree: the innermost module being read is the top of `stack`.
struct Collector {
    stack: Vec<Scope>,
}

impl Collector {
    fn scope(&mut self) -> &mut Scope {
        if self.stack.is_empty() {
            self.stack.push(Scope::default());
        }
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn record_use(&mut self, item: &syn::ItemUse) {
        let public = matches!(item.vis, syn::Visibility::Public(_));
        let at = place(item.use_token.span);
        self.record_use_tree(at, &item.tree, item.leading_colon.is_some(), public);
    }

    /// A `use` item's tree (`external`: written with a leading `::`; `public`: `pub use`).
    fn record_use_tree(&mut self, at: Place, tree: &syn::UseTree, external: bool, public: bool) {
        let mut leaves = Vec::new();
        use_leaves(tree, &mut Vec::new(), &mut leaves);
        if !external {
            use_heads(tree, &mut self.scope().heads);
        }
        let reexport = if public && !external {
            reexport(tree)
        } else {
            None
        };
        self.scope().uses.push(UseItem {
            place: at,
            leaves,
            external,
            reexport,
        });
    }

    /// The paths and heads in a macro's (or an attribute's) tokens, which syn leaves unparsed;
    /// in them, a `use ..;` is read as a `use` item and a `mod x;` as a declaration (as in
    /// `cfg_if!` bodies), and an item after a test-only `#[cfg(..)]` is left out.
    fn scan_tokens(&mut self, stream: TokenStream) {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Punct(p) if p.as_char() == '#' && test_only_attr(tokens.get(i + 1)) => {
                    i = item_end(&tokens, i + 2);
                }
                TokenTree::Group(group) => {
                    self.scan_tokens(group.stream());
                    i += 1;
                }
                TokenTree::Ident(ident)
                    if ident == "use" && !after_dollar_or_path_sep(&tokens, i) =>
                {
                    let end = (i + 1..tokens.len())
                        .find(|&k| matches!(&tokens[k], TokenTree::Punct(p) if p.as_char() == ';'));
                    let external = is_path_sep(&tokens, i + 1);
                    let from = if external { i + 3 } else { i + 1 };
                    let tree = end.and_then(|end| {
                        let stream: TokenStream =
                            tokens[from.min(end)..end].iter().cloned().collect();
                        syn::parse2::<syn::UseTree>(stream).ok()
                    });
                    match (tree, end) {
                        (Some(tree), Some(end)) => {
                            let public = i >= 1
                                && matches!(&tokens[i - 1], TokenTree::Ident(p) if p == "pub");
                            self.record_use_tree(place(ident.span()), &tree, external, public);
                            i = end + 1;
                        }
                        _ => i += 1,
                    }
                }
                TokenTree::Ident(ident)
                    if ident == "mod"
                        && matches!(tokens.get(i + 2), Some(TokenTree::Punct(p)) if p.as_char() == ';') =>
                {
                    if let Some(TokenTree::Ident(name)) = tokens.get(i + 1) {
                        let name = name.to_string();
                        self.scope().declared.push(Declared { name, path: None });
                    }
                    i += 3;
                }
                TokenTree::Ident(ident) if !after_dollar_or_path_sep(&tokens, i) => {
                    let mut segments = vec![ident.to_string()];
                    let mut j = i + 1;
                    let mut group = None;
                    while is_path_sep(&tokens, j) {
                        match tokens.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                segments.push(next.to_string());
                                j += 3;
                            }
                            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                                group = Some(group_firsts(g.stream()));
                                break;
                            }
                            _ => break,
                        }
                    }
                    let at = place(ident.span());
                    self.record_path(at, segments, group);
                    i = j;
                }
                _ => i += 1,
            }
        }
    }

    /// A path read from code or tokens: for the file view if it has two segments or more, for
    /// the module view if it starts with a head (`group`: the first names of a `{..}` group
    /// right after its last segment).
    fn record_path(&mut self, at: Place, segments: Vec<String>, group: Option<Vec<String>>) {
        let scope = self.scope();
        if HEADS.contains(&segments[0].as_str()) {
            let mut run = 1;
            while run < segments.len() && segments[run] == "super" {
                run += 1;
            }
            let firsts = if run < segments.len() {
                vec![segments[run].clone()]
            } else if let Some(group) = group {
                group
            } else if run >= 2 {
                // `super::super` alone: the last `super` is the name after the head.
                run -= 1;
                vec![segments[run].clone()]
            } else {
                Vec::new()
            };
            for first in firsts {
                let head = segments[..run].to_vec();
                scope.heads.push(HeadRef {
                    place: at,
                    head,
                    first,
                });
            }
        }
        if segments.len() >= 2 {
            scope.paths.push(CodePath {
                place: at,
                segments,
            });
        }
    }
}

/// Whether a token after a `#` is a test-only `[cfg(..)]`.
fn test_only_attr(token: Option<&TokenTree>) -> bool {
    let Some(TokenTree::Group(group)) = token else {
        return false;
    };
    if group.delimiter() != Delimiter::Bracket {
        return false;
    }
    let Ok(meta) = syn::parse2::<syn::Meta>(group.stream()) else {
        return false;
    };
    let syn::Meta::List(list) = &meta else {
        return false;
    };
    list.path.is_ident("cfg")
        && list
            .parse_args::<syn::Meta>()
            .is_ok_and(|m| implies_test(&m))
}

/// Where the item starting at `tokens[from]` ends (just past it): at its `;` or its first
/// `{..}`, whichever comes first.
fn item_end(tokens: &[TokenTree], from: usize) -> usize {
    let mut k = from;
    while k < tokens.len() {
        match &tokens[k] {
            TokenTree::Punct(p) if p.as_char() == ';' => return k + 1,
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return k + 1,
            _ => k += 1,
        }
    }
    k
}

/// Whether `tokens[j]` and `tokens[j + 1]` are a `::`.
fn is_path_sep(tokens: &[TokenTree], j: usize) -> bool {
    matches!(
        (tokens.get(j), tokens.get(j + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// Whether `tokens[i]` follows a `$` (`$crate`) or a `::` (the middle of a path).
fn after_dollar_or_path_sep(tokens: &[TokenTree], i: usize) -> bool {
    let dollar = i >= 1 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
    dollar || (i >= 2 && is_path_sep(tokens, i - 2))
}

/// The first name of each member of a `{..}` group's tokens (`self` and globs left out).
fn group_firsts(stream: TokenStream) -> Vec<String> {
    let mut firsts = Vec::new();
    let mut at_start = true;
    for token in stream {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => at_start = true,
            TokenTree::Ident(ident) if at_start => {
                if ident != "self" {
                    firsts.push(ident.to_string());
                }
                at_start = false;
            }
            _ => at_start = false,
        }
    }
    firsts
}

/// Every leaf of a use tree, under `prefix`.
fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
    let leaf = |prefix: &[String], name: &syn::Ident| {
        let mut segments = prefix.to_vec();
        if name != "self" {
            segments.push(name.to_string());
        }
        segments
    };
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_leaves(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => out.push(UseLeaf {
            segments: leaf(prefix, &name.ident),
            alias: None,
        }),
        syn::UseTree::Rename(rename) => out.push(UseLeaf {
            segments: leaf(prefix, &rename.ident),
            alias: Some(rename.rename.to_string()),
        }),
        syn::UseTree::Glob(_) => {
            let mut segments = prefix.clone();
            segments.push("*".to_owned());
            out.push(UseLeaf {
                segments,
                alias: None,
            });
        }
        syn::UseTree::Group(group) => {
            for item in &group.items {
                use_leaves(item, prefix, out);
            }
        }
    }
}

/// The module view's heads in a use tree: `use crate::a::X` is `crate` then `a`, and
/// `use super::{a::X, b}` is `super` then `a` and `super` then `b`.
fn use_heads(tree: &syn::UseTree, out: &mut Vec<HeadRef>) {
    match tree {
        syn::UseTree::Group(group) => {
            for item in &group.items {
                use_heads(item, out);
            }
        }
        syn::UseTree::Path(path) if HEADS.iter().any(|h| path.ident == h) => {
            let at = place(path.ident.span());
            let mut head = vec![path.ident.to_string()];
            let mut rest = &*path.tree;
            while let syn::UseTree::Path(next) = rest {
                if next.ident != "super" {
                    break;
                }
                head.push(next.ident.to_string());
                rest = &next.tree;
            }
            let firsts = match rest {
                syn::UseTree::Group(group) => group.items.iter().filter_map(member_first).collect(),
                syn::UseTree::Path(next) => vec![next.ident.to_string()],
                syn::UseTree::Name(name) => vec![name.ident.to_string()],
                syn::UseTree::Rename(rename) => vec![rename.ident.to_string()],
                syn::UseTree::Glob(_) => Vec::new(),
            };
            for first in firsts {
                out.push(HeadRef {
                    place: at,
                    head: head.clone(),
                    first,
                });
            }
        }
        _ => {}
    }
}

/// The first name of a member of a use group (`self` and globs have none).
fn member_first(tree: &syn::UseTree) -> Option<String> {
    let ident = match tree {
        syn::UseTree::Path(path) => &path.ident,
        syn::UseTree::Name(name) => &name.ident,
        syn::UseTree::Rename(rename) => &rename.ident,
        syn::UseTree::Glob(_) | syn::UseTree::Group(_) => return None,
    };
    (ident != "self").then(|| ident.to_string())
}

/// For `pub use [crate::|self::]module::rest`: the module and the names `rest` brings in.
fn reexport(tree: &syn::UseTree) -> Option<(String, Vec<String>)> {
    let mut tree = tree;
    if let syn::UseTree::Path(path) = tree {
        if (path.ident == "crate" || path.ident == "self")
            && matches!(&*path.tree, syn::UseTree::Path(_))
        {
            tree = &path.tree;
        }
    }
    let syn::UseTree::Path(module) = tree else {
        return None;
    };
    let mut names = Vec::new();
    brought_in(&module.tree, &mut names);
    Some((module.ident.to_string(), names))
}

/// The names a use tree brings in (a glob's are unknown).
fn brought_in(tree: &syn::UseTree, out: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(path) => brought_in(&path.tree, out),
        syn::UseTree::Name(name) => out.push(name.ident.to_string()),
        syn::UseTree::Rename(rename) => out.push(rename.rename.to_string()),
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(group) => group.items.iter().for_each(|item| brought_in(item, out)),
    }
}

/// The attributes of an item.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The value of a `#[path = ".."]` attribute.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        match item {
            syn::Item::Use(item) => self.record_use(item),
            syn::Item::Mod(module) => match &module.content {
                None => self.scope().declared.push(Declared {
                    name: module.ident.to_string(),
                    path: path_attr(&module.attrs),
                }),
                Some((_, items)) => {
                    self.stack.push(Scope::default());
                    for item in items {
                        self.visit_item(item);
                    }
                    let inner = self.stack.pop().unwrap_or_default();
                    self.scope().inline.push((module.ident.to_string(), inner));
                }
            },
            _ => syn::visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test_only(attrs) {
            syn::visit::visit_trait_item(self, item);
        }
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !is_test_only(&field.attrs) {
            syn::visit::visit_field(self, field);
        }
    }

    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        if !is_test_only(&variant.attrs) {
            syn::visit::visit_variant(self, variant);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !is_test_only(&arm.attrs) {
            syn::visit::visit_arm(self, arm);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !is_test_only(&local.attrs) {
            syn::visit::visit_local(self, local);
        }
    }

    fn visit_stmt_macro(&mut self, stmt: &'ast syn::StmtMacro) {
        if !is_test_only(&stmt.attrs) {
            syn::visit::visit_stmt_macro(self, stmt);
        }
    }

    fn visit_field_value(&mut self, field: &'ast syn::FieldValue) {
        if !is_test_only(&field.attrs) {
            syn::visit::visit_field_value(self, field);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let mut segments = Vec::new();
            for segment in &path.segments {
                segments.push(segment.ident.to_string());
                if !segment.arguments.is_none() {
                    break;
                }
            }
            if let Some(first) = path.segments.first() {
                self.record_path(place(first.ident.span()), segments, None);
            }
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        syn::visit::visit_macro(self, mac);
        self.scan_tokens(mac.tokens.clone());
    }

    fn visit_meta_list(&mut self, list: &'ast syn::MetaList) {
        syn::visit::visit_meta_list(self, list);
        self.scan_tokens(list.tokens.clone());
    }
}
