//! `#[derive(Tree)]`: structs as pytrees, fields in declaration order, `#[tree(static)]`
//! fields kept in the structure instead of the leaves.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Index};

use crate::check;

/// Whether a field carries `#[tree(static)]`.
fn is_static(field: &syn::Field) -> syn::Result<bool> {
    let mut found = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("tree")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("static") {
                found = true;
                Ok(())
            } else {
                let path = &meta.path;
                Err(check::refuse_tree_option(path, &check::code(path)))
            }
        })?;
    }
    Ok(found)
}

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let data = match &input.data {
        Data::Struct(data) => data,
        Data::Enum(e) => {
            let (keyword, name) = (&e.enum_token, &input.ident);
            return Err(check::refuse_tree_not_struct(&quote!(#keyword #name), "enum"));
        }
        Data::Union(u) => {
            let (keyword, name) = (&u.union_token, &input.ident);
            return Err(check::refuse_tree_not_struct(&quote!(#keyword #name), "union"));
        }
    };
    let name = &input.ident;
    let name_text = name.to_string();
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(syn::parse_quote!(::rjax::Unflatten));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let mut labels = Vec::new();
    let mut flatten = Vec::new();
    let mut unflatten = Vec::new();
    let mut bindings = Vec::new();
    for (i, field) in data.fields.iter().enumerate() {
        let member: TokenStream = match &field.ident {
            Some(id) => quote!(#id),
            None => {
                let index = Index::from(i);
                quote!(#index)
            }
        };
        let binding = format_ident!("__rjax_field{i}");
        let ty = &field.ty;
        labels.push(field.ident.as_ref().map_or(i.to_string(), |id| id.to_string()));
        if is_static(field)? {
            flatten.push(quote! {
                def.push(::rjax::tree::Node::Static(::rjax::tree::StaticValue::new(&self.#member)));
            });
            unflatten.push(quote! {
                let #binding: #ty = match def.next("a static field") {
                    ::rjax::tree::Node::Static(v) => v.get::<#ty>().unwrap_or_else(|| {
                        panic!(concat!("unflatten: the static field `", stringify!(#member), "` of ", #name_text, " holds another type"))
                    }),
                    other => { let other = other.clone(); def.mismatch("a static field", &other) }
                };
            });
        } else {
            flatten.push(quote! { ::rjax::Tree::flatten_into(&self.#member, def, leaves); });
            unflatten.push(quote! {
                let #binding: #ty = <#ty as ::rjax::Unflatten>::unflatten_from(def, leaves);
            });
        }
        bindings.push((member, binding));
    }
    let build = match &data.fields {
        Fields::Named(_) => {
            let fields = bindings.iter().map(|(m, b)| quote!(#m: #b));
            quote!(#name { #(#fields),* })
        }
        Fields::Unnamed(_) => {
            let fields = bindings.iter().map(|(_, b)| b);
            quote!(#name(#(#fields),*))
        }
        Fields::Unit => quote!(#name),
    };
    Ok(quote! {
        impl #impl_generics ::rjax::Tree for #name #ty_generics #where_clause {
            fn flatten_into(&self, def: &mut ::rjax::TreeDef, leaves: &mut ::std::vec::Vec<::rjax::Array>) {
                def.push(::rjax::tree::Node::Struct { name: #name_text, fields: &[#(#labels),*] });
                #(#flatten)*
            }
        }

        impl #impl_generics ::rjax::Unflatten for #name #ty_generics #where_clause {
            fn unflatten_from(
                def: &mut ::rjax::tree::DefReader<'_>,
                leaves: &mut dyn ::std::iter::Iterator<Item = ::rjax::Array>,
            ) -> Self {
                match def.next(#name_text) {
                    ::rjax::tree::Node::Struct { name, .. } if *name == #name_text => {}
                    other => { let other = other.clone(); def.mismatch(#name_text, &other) }
                }
                #(#unflatten)*
                #build
            }
        }
    })
}
