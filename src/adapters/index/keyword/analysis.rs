//! How a text becomes words: the index's fields and the analyzer (FTS5's
//! `porter unicode61 remove_diacritics 2`, with Porter's stemming).

use super::*;

/// The index's fields.
#[derive(Clone, Copy)]
pub(super) struct Fields {
    pub(super) row: Field,
    pub(super) workspace: Field,
    pub(super) length: Field,
    pub(super) text: [Field; 3],
}

pub(super) fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let row = builder.add_u64_field("row", INDEXED | FAST);
    let workspace = builder.add_i64_field("workspace", FAST);
    let length = builder.add_u64_field("length", FAST);
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let text = ["content", "tags", "files"].map(|name| builder.add_text_field(name, text.clone()));
    (
        builder.build(),
        Fields {
            row,
            workspace,
            length,
            text,
        },
    )
}

pub(super) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_WORD))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Porter)
        .build()
}

/// FTS5's `porter` stemming: Porter's original algorithm (Snowball's
/// `porter`), on words of 3 to 64 bytes (FTS5 leaves others alone).
#[derive(Clone, Copy)]
pub(super) struct Porter;

impl TokenFilter for Porter {
    type Tokenizer<T: Tokenizer> = PorterFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> PorterFilter<T> {
        PorterFilter(tokenizer)
    }
}

#[derive(Clone)]
pub(super) struct PorterFilter<T>(T);

impl<T: Tokenizer> Tokenizer for PorterFilter<T> {
    type TokenStream<'a> = PorterStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        PorterStream {
            tail: self.0.token_stream(text),
            stemmer: frostem::Stemmer::new(frostem::Algorithm::Porter),
        }
    }
}

pub(super) struct PorterStream<T> {
    pub(super) tail: T,
    pub(super) stemmer: frostem::Stemmer,
}

impl<T: TokenStream> TokenStream for PorterStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if (3..=64).contains(&token.text.len())
            && let std::borrow::Cow::Owned(stem) = self.stemmer.stem(&token.text)
        {
            token.text = stem;
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}
