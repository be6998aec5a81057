//! `#[derive(Input)]` for request bodies: the struct's field types say how each field is read
//! and what its schema is (`workapi_wire`), so the parser and the documented schema are one
//! declaration. Fields are named in camelCase on the wire (`r#type` is `type`); doc comments
//! become descriptions; `#[input(example = <expr>)]` on the struct gives the schema example
//! (an expression of type `serde_json::Value`); `#[input(rename = "…")]` names a field on the
//! wire; `#[input(hidden)]` reads a field without documenting it (a field refused with a
//! message, say); `#[input(rules = path)]` on the struct names its rules across fields, a
//! `fn(&<Name>Fields, &At, &mut Errors)` run on every field that parsed, so that a broken field
//! never hides another field's rule (workapi_wire, "Rules"); `#[input(schema = path)]` on the
//! struct documents those rules where JSON Schema can say them: a
//! `fn(Object, &mut Schemas) -> SchemaRef` that gets the generated object schema and returns the
//! documented one, adding the named schemas it refers to (a `oneOf` of one object per case).
//!
//! Beside the struct it generates `<Name>Fields`: every field as an `Option` (None: absent from
//! the parse because it failed), which the rules and `workapi_wire::Checked` read.

use proc_macro::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Expr, Fields, parse_macro_input};

#[proc_macro_derive(Input, attributes(input))]
pub fn derive_input(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let name = &input.ident;
    let name_text = name.to_string();
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(name, "Input is derived for structs with named fields"));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(name, "Input is derived for structs with named fields"));
    };
    let mut example: Option<Expr> = None;
    let mut rules: Option<syn::Path> = None;
    let mut documented: Option<syn::Path> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("input")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("example") {
                example = Some(meta.value()?.parse()?);
                Ok(())
            } else if meta.path.is_ident("rules") {
                rules = Some(meta.value()?.parse()?);
                Ok(())
            } else if meta.path.is_ident("schema") {
                documented = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error(
                    "expected `example = <serde_json::Value expression>`, `rules = <fn path>` or `schema = <fn path>`",
                ))
            }
        })?;
    }
    let vis = &input.vis;
    let fields_name = format_ident!("{}Fields", name);
    let description = doc_text(&input.attrs);

    let mut reads = Vec::new();
    let mut properties = Vec::new();
    let mut nested_all = Vec::new();
    let mut partial_fields = Vec::new();
    let mut partial_reads = Vec::new();
    let mut completes = Vec::new();
    for field in &fields.named {
        let ident = field.ident.as_ref().expect("named field");
        let mut wire = camel_case(&ident.to_string());
        let mut hidden = false;
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("input")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    let value: syn::LitStr = meta.value()?.parse()?;
                    wire = value.value();
                    Ok(())
                } else if meta.path.is_ident("hidden") {
                    hidden = true;
                    Ok(())
                } else {
                    Err(meta.error("expected `rename = \"…\"` or `hidden`"))
                }
            })?;
        }
        let ty = &field.ty;
        let local = format_ident!("field_{}", ident.to_string().trim_start_matches("r#"));
        let doc = doc_text(&field.attrs);
        let field_vis = &field.vis;
        partial_fields.push(quote! { #field_vis #ident: ::core::option::Option<#ty> });
        reads.push(quote! {
            let #local = <#ty as ::workapi_wire::Slot>::read_slot(map.get(#wire), &at.child(#wire), errors);
        });
        partial_reads.push(quote! { #ident: #local });
        completes.push(quote! { #ident: fields.#ident? });
        nested_all.push(quote! { <#ty as ::workapi_wire::Slot>::schemas(out); });
        if hidden {
            continue;
        }
        properties.push(quote! {
            let schema = ::workapi_wire::describe(<#ty as ::workapi_wire::Slot>::slot_schema(), #doc);
            object = object.property(#wire, schema);
            if <#ty as ::workapi_wire::Slot>::REQUIRED {
                object = object.required(#wire);
            }
        });
    }
    let example = match example {
        Some(expr) => quote! { object = object.examples([#expr]); },
        None => quote! {},
    };
    let run_rules = match rules {
        Some(path) => quote! { #path(&fields, at, errors); },
        None => quote! {},
    };
    // The generated object, or what the struct's `schema` function documents from it.
    let (schema_body, documented_schemas) = match documented {
        Some(path) => (
            quote! { #path(object.build(), &mut ::std::vec::Vec::new()) },
            quote! { let _ = #path(<Self as ::workapi_wire::Input>::generated_object().build(), out); },
        ),
        None => (quote! { object.into() }, quote! {}),
    };
    let fields_doc = format!("The fields of [`{name_text}`] that parsed (None: failed), for its rules.");

    Ok(quote! {
        #[doc = #fields_doc]
        #[allow(dead_code)]
        #vis struct #fields_name {
            #(#partial_fields),*
        }

        impl ::workapi_wire::Field for #name {
            fn read(
                value: &::serde_json::Value,
                at: &::workapi_wire::At,
                errors: &mut ::workapi_wire::Errors,
            ) -> ::core::option::Option<Self> {
                let map = ::workapi_wire::object(value, at, errors)?;
                <Self as ::workapi_wire::Input>::complete(
                    <Self as ::workapi_wire::Input>::read_fields(map, at, errors),
                )
            }

            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::schema::Schema> {
                ::workapi_wire::reference(#name_text)
            }

            fn schemas(
                out: &mut ::std::vec::Vec<(::std::string::String, ::utoipa::openapi::RefOr<::utoipa::openapi::schema::Schema>)>,
            ) {
                out.push((#name_text.to_owned(), <Self as ::utoipa::PartialSchema>::schema()));
                <Self as ::utoipa::ToSchema>::schemas(out);
            }
        }

        impl ::utoipa::PartialSchema for #name {
            fn schema() -> ::utoipa::openapi::RefOr<::utoipa::openapi::schema::Schema> {
                let object = <Self as ::workapi_wire::Input>::generated_object();
                #schema_body
            }
        }

        impl ::utoipa::ToSchema for #name {
            fn name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name_text)
            }

            fn schemas(
                out: &mut ::std::vec::Vec<(::std::string::String, ::utoipa::openapi::RefOr<::utoipa::openapi::schema::Schema>)>,
            ) {
                #(#nested_all)*
                #documented_schemas
            }
        }

        impl ::workapi_wire::Input for #name {
            type Fields = #fields_name;

            fn generated_object() -> ::utoipa::openapi::schema::ObjectBuilder {
                let mut object = ::utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(::utoipa::openapi::schema::Type::Object)
                    .description(::workapi_wire::non_empty(#description));
                #(#properties)*
                #example
                object
            }

            fn read_fields(
                map: &::serde_json::Map<::std::string::String, ::serde_json::Value>,
                at: &::workapi_wire::At,
                errors: &mut ::workapi_wire::Errors,
            ) -> #fields_name {
                #(#reads)*
                let fields = #fields_name { #(#partial_reads),* };
                #run_rules
                fields
            }

            fn complete(fields: #fields_name) -> ::core::option::Option<Self> {
                ::core::option::Option::Some(Self { #(#completes),* })
            }
        }
    })
}

/// The doc comment lines, joined as Markdown paragraphs are: one line break between lines.
fn doc_text(attrs: &[syn::Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    lines.join("\n").trim().to_owned()
}

/// `parent_id` → `parentId`; a raw identifier (`r#type`) loses its prefix.
fn camel_case(ident: &str) -> String {
    let ident = ident.trim_start_matches("r#");
    let mut out = String::with_capacity(ident.len());
    let mut upper = false;
    for c in ident.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
