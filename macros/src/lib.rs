//! The rjax attribute macros.
//!
//! Each entry point is thin: [`parse`] reads the item into a model (the signature's traced and
//! static parameters) and analyses the body (which locals are traced), [`check`] holds the
//! rules that refuse untraceable constructs with spanned errors, and [`expand`] writes the
//! Rust that traces, caches and runs the function through `rjax`'s runtime.
//!
//! On an error the user's item is emitted unchanged beside the `compile_error!`s, so the rest
//! of the crate (and the IDE) keeps working.

mod check;
mod expand;
mod parse;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

/// Makes a function traceable: callable as usual (it runs op by op), and callable from other
/// annotated functions, whose traces it is inlined into. See the `rjax` crate docs.
#[proc_macro_attribute]
pub fn traceable(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, expand::Mode::Traceable)
}

/// Compiles a function: the first call with a new signature traces it to IR, simplifies and
/// plans it; later calls run the cached plan. See the `rjax` crate docs.
#[proc_macro_attribute]
pub fn jit(attr: TokenStream, item: TokenStream) -> TokenStream {
    entry(attr, item, expand::Mode::Jit)
}

/// Implements `rjax::Tree` and `rjax::Unflatten` for a struct whose fields are pytrees;
/// fields marked `#[tree(static)]` are part of the structure, not leaves.
#[proc_macro_derive(Tree, attributes(tree))]
pub fn derive_tree(item: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(item as syn::DeriveInput);
    expand::tree::derive(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

fn entry(attr: TokenStream, item: TokenStream, mode: expand::Mode) -> TokenStream {
    let item2: TokenStream2 = item.clone().into();
    match expand::function(attr.into(), item2.clone(), mode) {
        Ok(tokens) => tokens.into(),
        Err(errors) => {
            let errors = errors.into_iter().map(syn::Error::into_compile_error);
            quote!(#(#errors)* #item2).into()
        }
    }
}
