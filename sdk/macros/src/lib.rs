//! `#[ochre_sdk::tool]`: a tool of an ochre plugin as one annotated function.
//! Use it through `ochre-sdk`, which re-exports it; see `ochre_sdk::tool`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Ident, ItemFn, Lit, LitInt, LitStr, Meta, Token};

/// Make a tool of a function `fn name(args: Args) -> Result<Output, ToolError>`.
///
/// The function's doc comment is the tool's description (lines trimmed and
/// joined with single spaces; a blank doc line starts a new paragraph), and
/// `Args` (serde `Deserialize` + schemars `JsonSchema`) gives its schema. The
/// attribute names the tool and sets its spec:
///
/// - `name = "prefix_verb"` (required): the tool's name;
/// - `read_only`, `destructive`, `open_world`: MCP annotations;
/// - `tier = 2`: disclosure tier (default 1);
/// - `intent`, `output_mode`: host features the tool accepts;
/// - `scope = Browser | NetworkAdjacent | Local`: what the intent guard sees;
/// - `redact = "field"` or `redact = ["a", "b"]`: arguments whose values the
///   tool types into the page: never journaled, parameters in recordings;
/// - `secret = "field"` or `secret = ["a", "b"]`: arguments whose values are
///   secrets the tool sets behind the page (a cookie's value, a stored token):
///   never journaled, secret parameters (no default) in recordings;
/// - `secret_result = "code as totp:{domain}"`: a field of the structured
///   result that is a secret, and the name the host knows it by;
/// - `description = "..."`: instead of the doc comment.
///
/// It generates a unit struct named after the function in UpperCamelCase
/// (`fn read_page` -> `ReadPage`) implementing `ochre_sdk::Tool`; list that
/// type in `register_plugin!`'s `tools: [...]`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = syn::parse_macro_input!(attr as Attrs);
    let func = syn::parse_macro_input!(item as ItemFn);
    match expand(attr, func) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The attribute's `key = value` and flag list.
struct Attrs(Punctuated<Meta, Token![,]>);

impl Parse for Attrs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(Self(Punctuated::parse_terminated(input)?))
    }
}

/// What the attribute said.
#[derive(Default)]
struct Spec {
    name: Option<LitStr>,
    description: Option<LitStr>,
    calls: Vec<Tokens>,
}

/// `"a"` or `["a", "b"]`: the strings.
fn strs_of(value: &Expr) -> syn::Result<Vec<LitStr>> {
    match value {
        Expr::Array(a) => a.elems.iter().map(str_of).collect(),
        other => Ok(vec![str_of(other)?]),
    }
}

fn str_of(e: &Expr) -> syn::Result<LitStr> {
    match e {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(s.clone()),
        other => Err(syn::Error::new_spanned(other, "expected a string literal")),
    }
}

fn spec_of(attrs: Attrs) -> syn::Result<Spec> {
    let mut spec = Spec::default();
    for meta in attrs.0 {
        let key = meta.path().get_ident().map(Ident::to_string).unwrap_or_default();
        match (&meta, key.as_str()) {
            (Meta::Path(_), "read_only") => spec.calls.push(quote!(.read_only())),
            (Meta::Path(_), "destructive") => spec.calls.push(quote!(.destructive())),
            (Meta::Path(_), "open_world") => spec.calls.push(quote!(.open_world())),
            (Meta::Path(_), "intent") => spec.calls.push(quote!(.with_intent())),
            (Meta::Path(_), "output_mode") => spec.calls.push(quote!(.with_output_mode())),
            (Meta::NameValue(nv), "name") => spec.name = Some(str_of(&nv.value)?),
            (Meta::NameValue(nv), "description") => spec.description = Some(str_of(&nv.value)?),
            (Meta::NameValue(nv), "tier") => {
                let Expr::Lit(ExprLit { lit: Lit::Int(n), .. }) = &nv.value else {
                    return Err(syn::Error::new_spanned(&nv.value, "tier is a number: tier = 2"));
                };
                let n: LitInt = n.clone();
                spec.calls.push(quote!(.tier(#n)));
            }
            (Meta::NameValue(nv), "scope") => {
                let Expr::Path(p) = &nv.value else {
                    return Err(syn::Error::new_spanned(
                        &nv.value,
                        "scope is Browser, NetworkAdjacent or Local",
                    ));
                };
                spec.calls.push(quote!(.scope(::ochre_sdk::Scope::#p)));
            }
            (Meta::NameValue(nv), "redact") => {
                for f in strs_of(&nv.value)? {
                    spec.calls.push(quote!(.redact(#f)));
                }
            }
            (Meta::NameValue(nv), "secret") => {
                for f in strs_of(&nv.value)? {
                    spec.calls.push(quote!(.secret_arg(#f)));
                }
            }
            (Meta::NameValue(nv), "secret_result") => {
                let sr = str_of(&nv.value)?;
                if !sr.value().contains(" as ") {
                    return Err(syn::Error::new_spanned(
                        &nv.value,
                        "secret_result = \"FIELD as NAME\", e.g. \"code as totp:{domain}\"",
                    ));
                }
                spec.calls.push(quote!(.secret_result(#sr)));
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    &meta,
                    "unknown #[tool] key: expected name = \"..\", description = \"..\", read_only, \
                     destructive, open_world, intent, output_mode, tier = N, scope = .., redact = .., secret = .., secret_result = ..",
                ));
            }
        }
    }
    Ok(spec)
}

/// The doc comment as one description: lines trimmed and joined with single
/// spaces; a blank line starts a new paragraph.
fn doc_of(func: &ItemFn) -> Option<String> {
    let mut paragraphs: Vec<Vec<String>> = vec![Vec::new()];
    for a in &func.attrs {
        let Meta::NameValue(nv) = &a.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        let Ok(line) = str_of(&nv.value) else {
            continue;
        };
        let line = line.value().trim().to_owned();
        match (line.is_empty(), paragraphs.last_mut()) {
            (true, Some(p)) if !p.is_empty() => paragraphs.push(Vec::new()),
            (false, Some(p)) => p.push(line),
            _ => {}
        }
    }
    let text: Vec<String> =
        paragraphs.into_iter().filter(|p| !p.is_empty()).map(|p| p.join(" ")).collect();
    (!text.is_empty()).then(|| text.join("\n\n"))
}

/// `read_page` -> `ReadPage`.
fn camel(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
        })
        .collect()
}

fn expand(attrs: Attrs, func: ItemFn) -> syn::Result<Tokens> {
    let spec = spec_of(attrs)?;
    let sig = &func.sig;
    let Some(name) = spec.name else {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[tool] needs the tool's name: #[tool(name = \"prefix_verb\")]",
        ));
    };
    let description = match (spec.description, doc_of(&func)) {
        (Some(d), _) => d.value(),
        (None, Some(d)) => d,
        (None, None) => {
            return Err(syn::Error::new_spanned(
                &sig.ident,
                "a tool needs a description: write a doc comment (it is what agents read)",
            ));
        }
    };
    let args = match sig.inputs.iter().collect::<Vec<_>>().as_slice() {
        [syn::FnArg::Typed(pat)] => pat.ty.clone(),
        _ => {
            return Err(syn::Error::new_spanned(
                &sig.inputs,
                "a tool function takes one argument, its arguments struct: fn name(args: Args)",
            ));
        }
    };
    if sig.asyncness.is_some() {
        return Err(syn::Error::new_spanned(sig, "a tool function is not async"));
    }
    let fn_name = &sig.ident;
    let base = fn_name.to_string();
    let ty = format_ident!("{}", camel(base.trim_start_matches("r#")));
    let calls = &spec.calls;
    let vis = &func.vis;
    let doc = format!("The `{}` tool (see [`{fn_name}`]).", name.value());
    Ok(quote! {
        #func

        #[doc = #doc]
        #vis struct #ty;

        impl ::ochre_sdk::Tool for #ty {
            type Args = #args;
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = #description;

            fn spec() -> ::ochre_sdk::ToolSpec {
                ::ochre_sdk::ToolSpec::default() #(#calls)*
            }

            fn run(args: #args) -> ::std::result::Result<::ochre_sdk::Output, ::ochre_sdk::ToolError> {
                #fn_name(args)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_descriptions() {
        assert_eq!(camel("read_page"), "ReadPage");
        assert_eq!(camel("generate"), "Generate");
        let raw: ItemFn = syn::parse_quote! { /// Types.
        fn r#type(a: A) -> R { run(a) } };
        let out = expand(syn::parse_quote!(name = "type"), raw).expect("raw ident").to_string();
        assert!(out.contains("struct Type"), "{out}");
        let f: ItemFn = syn::parse_quote! {
            /// First line
            ///   continues here.
            ///
            /// Second paragraph.
            fn read_page(args: A) -> R { run(args) }
        };
        assert_eq!(doc_of(&f).as_deref(), Some("First line continues here.\n\nSecond paragraph."));
    }

    #[test]
    fn bad_attributes_are_errors_naming_the_fix() {
        let f: ItemFn = syn::parse_quote! { /// Doc.
        fn t(a: A) -> R { run(a) } };
        let attrs: Attrs = syn::parse_quote!(name = "x_y", colour = "red");
        let e = expand(attrs, f.clone()).expect_err("unknown key");
        assert!(e.to_string().contains("unknown #[tool] key"), "{e}");
        let e = expand(syn::parse_quote!(read_only), f.clone()).expect_err("no name");
        assert!(e.to_string().contains("needs the tool's name"), "{e}");
        let undocumented: ItemFn = syn::parse_quote! { fn t(a: A) -> R { run(a) } };
        let e = expand(syn::parse_quote!(name = "x_y"), undocumented).expect_err("no doc");
        assert!(e.to_string().contains("needs a description"), "{e}");
        let two: ItemFn = syn::parse_quote! { /// Doc.
        fn t(a: A, b: B) -> R { run(a, b) } };
        let e = expand(syn::parse_quote!(name = "x_y"), two).expect_err("two args");
        assert!(e.to_string().contains("takes one argument"), "{e}");
        let ok = expand(
            syn::parse_quote!(name = "x_y", tier = 2, scope = Browser, redact = ["a", "b"]),
            f,
        )
        .expect("ok")
        .to_string();
        assert!(
            ok.contains("struct T") && ok.contains("tier (2)") && ok.contains("redact (\"b\")"),
            "{ok}"
        );
    }
}
