"""Every word the app shows, in English and Korean, and which of the two a session sees.

``t(key, **values)`` is the one way a page gets a label, help text, caption or message: the string of the
session's UI language (``st.session_state["ui.lang"]``), formatted with ``values``. The sidebar switch sets the
language; until the user uses it, the language is the open index's (Korean for a Korean model, else English),
and a ``lang`` URL parameter (written only when the language differs from the index's) carries a choice into a
reloaded or shared page. Examples follow the index's language instead (``demo.examples``): an English index
cannot answer 배.

Streamlit renders every message as markdown (``st.error`` and ``st.info`` included), so a word a user typed or a
document's text could otherwise become a link, a remote image or LaTeX. A string here is markdown; the values
filled into it are text: ``t`` and ``indexer_text`` escape each one (``fill``), and what they return is ``Markdown``,
safe to fill into another string as it is. Text that is not shown as markdown (a table's cells, a chart's labels)
comes from ``plain`` instead, with its values as they are. It passes 450 lines because of one table,
``STRINGS``: every message in both languages side by side, so that a translator reads and checks them in one place.
"""

from __future__ import annotations

import re
import string

import streamlit as st

from encoder.terminal import visible_on_page
from indexer.errors import MESSAGES

LANGUAGES = {"ko": "한국어", "en": "English"}  # as the switch shows them, each in its own language
LANGUAGE_LABEL = "한국어 / English"  # the switch's label, readable whichever language is shown
LOADING = "Loading ELMo Search… · 불러오는 중…"  # shown before the language is known
LANG_KEY = "ui.lang"  # the switch (a "ui." key: kept when pages change)
_CHOSEN = "lang.chosen"  # set once the user (or a URL) has chosen, so the index's language no longer decides
_URL_READ = "lang.url_read"
_INDEX_DEFAULT = "lang.index"  # the open index's language, as the UI language it suggests
URL_PARAM = "lang"

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        # pages and sidebar
        "page.search": "Search",
        "page.word_in_context": "Word in context",
        "page.senses": "Senses",
        "page.about": "About",
        "sidebar.demo": "Demo collection",
        "sidebar.index_dir": "Index folder",
        "sidebar.index_dir_help": "Any folder built by `python -m indexer build` or `python -m app --index DIR`.",
        "sidebar.model": "Model",
        # opening the index and asking it
        "spinner.open": "Loading the model and the index…",
        "spinner.search": "Searching…",
        "spinner.neighbors": "Finding the nearest uses…",
        "spinner.senses": "Clustering the word's occurrences…",
        "spinner.compare": "Comparing the two uses…",
        "index.missing": "There is no index in `{path}` yet.",
        "index.interrupted": "A build was started there and has not finished: it may still be running, "
        "or it was interrupted (running the command again resumes it).",
        "index.build_demo": "Build the demo index there (a few minutes on a CPU; only once), then reload this page:",
        "index.own_documents": "Or index your own documents (.txt, .jsonl, .csv, .parquet files or folders):",
        "index.cannot_open": "The index in `{path}` cannot be opened: {error}",
        "index.rebuild": "Rebuild it (this replaces it) with:",
        # results and messages (app/render.py)
        "render.relevance": "relevance {value}",
        "render.matched_words": "matched words: {words}",
        "render.by_meaning": "found by meaning",
        "render.no_shared_words": "no shared words",
        "render.why_parts": "| part | score | from chance | beats random queries |\n|---|---:|---:|---:|\n{rows}",
        "render.why_caption": "Relevance {relevance} is the score the list is sorted by ({score}: each part's "
        "distance from chance, in spreads of random-word queries' best scores, times its weight), as the share of "
        "random-word queries it beats by a margin. Best passage of {doc}.",
        "render.why_caption_ranked": "The list is ranked by score ({score}: each part's distance from chance, in "
        "spreads of random-word queries' best scores, times its weight). Best passage of {doc}.",
        "render.part.elmo": "ELMo cosine ({layers})",
        "render.part.keywords": "BM25 keywords",
        "render.part.glove": "GloVe cosine",
        "render.weaker_below": "Weaker matches below: under 50 % relevance, not clearly better than the best "
        "document of a typical random-word query.",
        "render.as_typed": "Search for {query} as typed instead",
        "render.no_uses": "No other uses found.",
        "render.no_good_match": "No good match: even the best document scores no better than random words typically "
        "do. Try other words, or show what was found below.",
        "render.no_match": "No document contains any of the query's words. Try other words.",
        "render.unexpected": "Something went wrong ({kind}: {error}). The details are in the server log.",
        # layer mix and token picker (app/widgets.py)
        "layer.token": "h0 · char-CNN (token)",
        "layer.lstm": "h{j} · biLSTM {j}",
        "layer.top": " (top)",
        "rep.label": "Representation",
        "rep.help": "How two uses of a word are compared. Context prediction (the default): by the words ELMo's "
        "own language model expects in the word's place, the forward LM given the words before and the backward LM "
        "given the words after. ELMo layer mix (paper): ELMo as Peters et al. (2018) use it, γ Σ s_j h_j with the "
        "index's weights. One ELMo layer: h0 knows only the word's spelling, the top layer has read the whole "
        "sentence.",
        "rep.prediction": "context prediction",
        "rep.states": "context states",
        "rep.mix": "ELMo layer mix (paper)",
        "rep.layer": "ELMo {layer}",
        "preset.token": "token",
        "preset.top": "top",
        "preset.average": "average",
        "preset.custom": "custom",
        "mix.preset": "Layer mix preset",
        "mix.preset_help": "token = the context-free char-CNN layer only; top = the last biLSTM layer; "
        "average = all layers equally; custom = your sliders.",
        "mix.gamma": "γ (scale)",
        "mix.gamma_help": "γ scales the whole vector. Cosine similarity ignores scale, so it does not change "
        "rankings; it matters when ELMo feeds a downstream model.",
        "mix.all_zero": "Give at least one layer a weight above zero.",
        "mix.caption": "The sliders are normalised so that the weights s_j sum to 1; h_j is layer j's vector for a "
        "token.",
        "picker.no_words": "This sentence has no word the collection holds: type another one.",
        "picker.not_in_sentence": "“{word}” is not in this sentence: pick the word you want to look up.",
        "picker.click": "Pick a word of the sentence to see its nearest uses.",
        "picker.not_indexed": "Not in the collection, so not offered: {words}",
        # Search
        "search.title": "Search",
        "search.query": "Query",
        "search.placeholder": "e.g. {example}",
        "search.button": "Search",
        "search.examples": "Examples",
        "search.advanced": "Advanced: method, number of results, layer mix",
        "search.method": "Method",
        "search.method_help": "Keywords + ELMo (the default) adds BM25 keyword matching and ELMo passage similarity, "
        "each measured against chance; ELMo compares the layers of the mix below (by default the token layer, the "
        "char-CNN's context-free word vectors, the best measured on the demo's judged queries).",
        "search.results": "Results",
        "search.as_typed": "Search the words as typed (no respelling)",
        "search.type_query": "Type a query, or pick an example, to search the collection.",
        "search.other_language": "This query is written in {language}; this collection is in {collection}.",
        "search.in_demo": "Search the {demo} demo",
        "language.en": "English",
        "language.ko": "Korean",
        "search.relevance_help": "Relevance, the number the list is sorted by, on one scale for every method: the "
        "share of random-word queries (as many words as yours) whose best document this one beats by a clear margin. "
        "Under 50 % a document is not clearly better than chance: it is listed after a line, as a weaker match. 100 % "
        "is kept for a document that beats every random query by the margin. When even the best document is under "
        "50 % (no good match), or a collection has fewer than 50 documents (too few to tell; a note says so), the "
        "documents are ranked by score without relevance.",
        "search.caption": "Documents ranked by relevance; under each, its best passage and why it came up.",
        "search.glove_caption": "The same documents ranked by static GloVe vectors (one vector per word, whatever "
        "its context).",
        "method.hybrid": "Keywords + ELMo {layers}",
        "method.elmo": "ELMo {layers} only",
        "layers.token": "token layer",
        "layers.top": "top layer",
        "layers.average": "all layers",
        "layers.custom": "custom layer mix",
        "method.keywords": "Keywords (BM25)",
        "method.glove": "GloVe (static baseline)",
        # Word in context
        "wic.title": "Word in context",
        "wic.caption": "ELMo reads a word differently in every sentence. Here are the uses in the collection nearest "
        "to a chosen word, what ELMo's language model expects in its place, and GloVe's nearest words (the same in "
        "any sentence). Change the sentences, the words and the representation under the answer.",
        "wic.question_heading": "The question",
        "wic.by": "Nearest uses by {representation}:",
        "wic.expects_heading": "What the model expects here",
        "expect.forward": "given the words before",
        "expect.backward": "given the words after",
        "expect.rare": "(a rare word)",
        "expect.start": "(the sentence's start)",
        "expect.end": "(the sentence's end)",
        "expect.caption": "The forward language model's ten likeliest words for this place (each with its "
        "probability), having read only the words before it, and the backward one's, having read only the words "
        "after it. Context prediction compares uses by these expectations. “(a rare word)” stands for every word "
        "outside the model's vocabulary.",
        "wic.compared_heading": "The two uses compared",
        "wic.compared_tab": "A vs B",
        "wic.compared_caption": "The cosine between “{a}” in A and “{b}” in B in each representation (1: the same "
        "vector).",
        "wic.column_representation": "representation",
        "wic.column_cosine": "cosine",
        "wic.mix_is_average": "The index's ELMo layer mix weighs the layers {weights} with γ = {gamma}: the plain "
        "average of the layers. Peters et al. learn s_j and γ for each task; these were not learned.",
        "wic.mix_weights": "The index's ELMo layer mix weighs the layers {weights} with γ = {gamma}.",
        "wic.readout_centred": "Context prediction compares two uses of “{word}” around the mean of its uses in the "
        "collection, so uses of different senses can score below 0.",
        "wic.examples": "**Examples:**",
        "wic.compare": "Compare with a second sentence",
        "wic.sentence": "Sentence {side}",
        "wic.type_sentence": "Type a sentence.",
        "wic.word_of": "Word of sentence {side}",
        "wic.neighbours": "Neighbours",
        "wic.same_word": "Same word only",
        "wic.same_word_help": "Only uses of the same word: shows which of its senses each sentence gets. Off: the "
        "nearest uses of any word.",
        "wic.elmo_heading": "ELMo · “{word}” in {side}",
        "wic.glove_heading": "GloVe · nearest words",
        "wic.glove_caption": "One vector per word, whatever the sentence.",
        "wic.column_word": "word",
        "wic.column_similarity": "similarity",
        "wic.tab": "{side} · {word}",
        "wic.glove_tab": "GloVe",
        "wic.layers_heading": "Layer by layer",
        "wic.layers_caption": "The {k} nearest uses of the same word in each representation: context prediction, "
        "the index's mix (`{mix}`) and each layer alone. Peters et al. (2018, §5.3) found that the first biLSTM "
        "layer holds more syntax (it should lead on part of speech) and the top layer more meaning (it should lead "
        "on sense). Counted over the uses the demo labels by hand (`labels.tsv` beside its documents); the token "
        "layer gives every use of a word the same vector, so its order is arbitrary.",
        "wic.layers_of": "**{side} · “{word}”**: sense *{sense}*, part of speech {pos}",
        "wic.layers_unlabelled": "{side}: the demo has no label for this use of “{word}”; the counts need a sentence "
        "it labels (an example, as it is).",
        "wic.column_same_pos": "same POS",
        "wic.column_same_sense": "same sense",
        "wic.column_senses": "senses, nearest first",
        "wic.column_chance": "chance",
        "wic.column_best": "best possible",
        "wic.column_verdict": "verdict",
        "wic.yardstick_caption": "Chance: how many of the labelled neighbours would be of sense *{sense}* if they "
        "were drawn at random from the uses of “{word}” in this collection ({in_sense} of its {total} labelled uses "
        "are); best possible: all of them, up to {in_sense}. Within half a use of chance counts as at chance.",
        "wic.yardstick": "In its sense (*{sense}*): {count} of {counted}; chance {chance}, best possible {best}: "
        "{verdict}.",
        "wic.leaders": "Most uses of its sense here: {names} ({count} of {counted}).",
        "wic.below_chance": "Below chance here: {names}.",
        "wic.example_wrong": "**This model gets its own example wrong**: by {names} fewer of the nearest uses are "
        "*{sense}* than random uses of “{word}” would give. The model card says what it still gets wrong: "
        "[About › {section}](about#{anchor}).",
        "wic.example_wrong_plain": "**This model gets its own example wrong**: by {names} fewer of the nearest uses "
        "are *{sense}* than random uses of “{word}” would give.",
        "wic.column_typical_same": "typical, same sense",
        "wic.column_typical_other": "typical, other senses",
        "wic.typical_caption": "Typical cosines of “{word}” in this collection: the median between two of its "
        "labelled uses of the same sense ({same} pairs) and of different senses ({other} pairs). Read A and B's "
        "cosine against them: near the first, like two uses of one sense; near the second, like two senses.",
        "wic.no_typical": "No typical cosines for “{word}”: the demo labels none of its uses in this collection.",
        "yardstick.below": "below chance",
        "yardstick.at": "at chance",
        "yardstick.above": "above chance",
        "yardstick.tied": "tied: no verdict",
        "wic.other_model": "Beside another model",
        "wic.other_model_help": "The same uses asked of an index of the same documents built with another model (a "
        "folder named FOLDER-MODEL beside this one: `python -m app --model elmo-small` builds the demo's).",
        "wic.paper_model": "The paper's ELMo beside this model: `python -m encoder download elmo-original`, then "
        "`python -m app --model elmo-original` (the README's demo section says how long it takes).",
        "wic.other_language": "The {model} index is of another language; choose an index of the same documents.",
        "wic.other_heading": "The same words with {model}",
        "wic.other_list": "**“{word}” in {side}**",
        # Senses
        "senses.title": "Senses",
        "senses.caption": "Every occurrence of the word in the collection is read by what ELMo's language model "
        "expects in its place (context prediction; or the ELMo layers you choose); k-means groups the occurrences "
        "into senses, each named by the words the model expects at its uses, and PCA draws them in 2-D. No "
        "dictionary is involved: the senses come from the contexts alone.",
        "senses.by": "Clustered by {representation}.",
        "senses.purity": "Purity",
        "senses.purity_help": "Of the {n} uses of “{word}” the demo labels by hand, the share that are of their "
        "cluster's most common labelled sense (1: each cluster holds one sense).",
        "senses.column_cluster": "cluster",
        "senses.column_name": "named by",
        "senses.column_labelled": "labelled sense",
        "senses.unlabelled": "not labelled",
        "senses.read_outlines": "Colours and shapes are the senses the demo labels by hand; each dashed outline is "
        "one cluster, numbered as its card.",
        "senses.word": "Word",
        "senses.k": "Number of senses",
        "senses.k_help": "auto picks the number whose senses come back the most alike when redone on subsamples of the uses, among those whose every sense has 5 uses or more: at least 2 once the word has 10 uses, at most 8. Context prediction is clustered beside the ELMo layer mix (what the model expects there and what the word there is): together they follow senses best on the labelled development words.",
        "senses.auto": "auto",
        "senses.try": "Try",
        "senses.type_word": "Type a word to see its senses.",
        "senses.occurrences": "Occurrences",
        "senses.senses": "Senses",
        "senses.silhouette": "Silhouette",
        "senses.silhouette_help": "How well separated the clusters are (cosine, -1 to 1).",
        "senses.card": "Sense {n}",
        "senses.size_one": "{n} occurrence",
        "senses.size_many": "{n} occurrences",
        "senses.column_sentence": "sentence",
        "senses.all": "All {n} occurrences of “{word}”",
        "senses.read_points": "Each point is one occurrence: point at it or tap it to read its sentence. With a "
        "mouse, scroll to zoom and drag to move.",
        "senses.no_label": "no distinctive words",
        "senses.several_words": "The model reads “{typed}” as several words ({words}): type one of them.",
        "senses.read_as": "Showing “{word}”: the word the model reads in “{typed}”.",
        # About
        "about.title": "About",
        "about.how": "How ELMo works",
        "about.how_text": """
ELMo (Peters et al., 2018, *Deep contextualized word representations*) gives every word a vector that
depends on the whole sentence it is in, so *bank* by a river and *bank* on the high street get different vectors.
This model has {n_layers} layers:

1. **Characters → char-CNN (h0).** Each token is spelled out as bytes; convolutions of several widths and a
   highway layer turn the spelling into a context-free token vector. Any word gets one, even one never seen in
   training, but it is the same in every sentence.
2. **biLSTM layers (h1 … h{top}).** A forward LSTM reads the sentence left to right and learns to predict
   the next word; a backward LSTM reads right to left and predicts the previous one. Each layer's two directions
   are concatenated. Lower layers carry more syntax, the top layer more meaning, which is why the top layer
   separates the senses of a word best.
3. **Weighted sum.** ELMo = γ Σⱼ sⱼ hⱼ: a task picks softmax-normalised weights sⱼ over the layers and a scale γ.
   Here the weights decide which layers search compares; try the presets on the Search page.
""",
        "about.diagram_chars": "characters of each token\\n‹b› b a n k ‹/b›",
        "about.diagram_cnn": "char-CNN → highway → projection\\n{widths} filter widths, {filters} filters",
        "about.diagram_h0": "h0: token layer ({dim} dims)\\nsame vector in every sentence",
        "about.diagram_lstm": "h{j}: biLSTM layer {j}\\nforward →  ⊕  ← backward",
        "about.model_card": "Model card",
        "about.no_card": "The model {name!r} has no model card (README.md beside its weights).",
        "about.model": "Model",
        "about.index": "Index",
        "about.fact": "fact",
        "about.value": "value",
        "fact.name": "name",
        "fact.parameters": "parameters",
        "fact.layers": "layers",
        "fact.layers_value": "{n} (token + {lstm} biLSTM)",
        "fact.vector_size": "vector size",
        "fact.filters": "char-CNN filters",
        "fact.lstm_size": "LSTM size",
        "fact.vocab_size": "LM vocabulary",
        "fact.vocab_size_value": "{n} words",
        "fact.language": "language",
        "fact.documents": "documents",
        "fact.sentences": "sentences",
        "fact.tokens": "tokens",
        "fact.token_vectors": "words with vectors",
        "fact.glove": "GloVe baseline",
        "fact.faiss": "FAISS indexes",
        "fact.disk": "size on disk",
        "fact.built": "built",
        "fact.corpus": "corpus files",
        "fact.folder": "folder",
        "glove.stanford": "Stanford's glove.6B {dim}-d (Pennington et al. 2014), {size}, from {package}; licence "
        "{license}; vectors SHA-256 {sha256}",
        "glove.trained": "trained on this index's corpus, {size}",
        "glove.korean": "ours, trained on the Korean corpus (corpus-ko) and shipped beside the Korean model, {size}; "
        "vectors SHA-256 {sha256}",
        "glove.size": "{words} words × {dim}",
        "about.all_stats": "All statistics",
        "about.weights": "Layer weights in use",
        "about.weights_caption": "Search compares passages mixed as `{search}` (the best mix on the judged demo "
        "queries). Word in context and Senses compare uses by context prediction, what the language model expects "
        "at them; their ELMo layer mix is `{words}`. The index keeps every layer, so the sliders on the Search page "
        "re-mix them per query.",
        "about.column_layer": "layer",
        "about.column_weight": "weight s_j",
        "about.used_by_search": "search",
        "about.used_by_words": "words in context",
        "about.layers_heading": "What each layer holds",
        "about.layers_caption": "Linear probes on this model's frozen layers (`{command}`, {day}; UD English EWT "
        "dev and the sense probe, tables in docs/evaluation.md). Peters et al. (2018, §5.3) found syntax lower and "
        "meaning higher: part of speech is read best at layer 1, above all for words whose tag depends on the "
        "context; senses at layer 2, and better than any layer by context prediction.",
        "about.column_upos": "part of speech (UPOS), %",
        "about.column_upos_ambiguous": "part of speech, ambiguous words, %",
        "about.column_xpos": "Penn tags (XPOS), %",
        "about.column_sense_auc": "sense probe AUC",
        "about.readout_row": "sense readout (context prediction)",
        "about.readout_auc": "{auc:.1f} (centred {centred:.1f})",
        "about.mixes_caption": "The layer weights s_j a task learns for itself (`{command}`, {day}), beside the plain "
        "average (1/{n} each): part-of-speech tagging leans on the lower layers, WiC (is a word used in the same "
        "sense?) on the token layer and the top one.",
        "about.mix_pos": "learned for POS",
        "about.mix_wic": "learned for WiC",
        "about.mix_average": "plain average",
    },
    "ko": {
        "page.search": "검색",
        "page.word_in_context": "문맥 속 단어",
        "page.senses": "단어의 뜻",
        "page.about": "소개",
        "sidebar.demo": "데모 문서 모음",
        "sidebar.index_dir": "색인 폴더",
        "sidebar.index_dir_help": "`python -m indexer build` 또는 `python -m app --index DIR`로 만든 폴더면 됩니다.",
        "sidebar.model": "모델",
        "spinner.open": "모델과 색인을 불러오는 중…",
        "spinner.search": "검색하는 중…",
        "spinner.neighbors": "가장 가까운 쓰임을 찾는 중…",
        "spinner.senses": "단어가 나온 자리들을 뜻별로 묶는 중…",
        "spinner.compare": "두 쓰임을 비교하는 중…",
        "index.missing": "`{path}`에 아직 색인이 없습니다.",
        "index.interrupted": "그곳에서 색인 만들기가 시작되었지만 끝나지 않았습니다. 아직 진행 중이거나 "
        "중단되었을 수 있습니다(같은 명령을 다시 실행하면 이어서 만듭니다).",
        "index.build_demo": "그곳에 데모 색인을 만든 뒤(CPU에서 몇 분, 처음 한 번만) 이 페이지를 새로 고치세요:",
        "index.own_documents": "또는 가지고 있는 문서(.txt, .jsonl, .csv, .parquet 파일이나 폴더)를 색인하세요:",
        "index.cannot_open": "`{path}`의 색인을 열 수 없습니다: {error}",
        "index.rebuild": "다음 명령으로 다시 만드세요(지금 있는 색인을 대신합니다):",
        "render.relevance": "관련도 {value}",
        "render.matched_words": "일치한 단어: {words}",
        "render.by_meaning": "뜻으로 찾음",
        "render.no_shared_words": "같은 단어 없음",
        "render.why_parts": "| 부분 | 점수 | 우연과의 차이 | 무작위 질의보다 나은 비율 |\n|---|---:|---:|---:|\n{rows}",
        "render.why_caption": "관련도 {relevance}는 목록을 정렬한 점수({score}: 부분마다 우연과의 차이를 무작위 "
        "단어 질의의 최고 점수 표준편차 단위로 잰 값에 가중치를 곱해 더한 것)를, 그 점수가 여유 있게 이기는 무작위 "
        "단어 질의의 비율로 나타낸 값입니다. {doc}에서 가장 잘 맞는 문장입니다.",
        "render.why_caption_ranked": "목록은 점수({score}: 부분마다 우연과의 차이를 무작위 단어 질의의 최고 점수 "
        "표준편차 단위로 잰 값에 가중치를 곱해 더한 것) 순입니다. {doc}에서 가장 잘 맞는 문장입니다.",
        "render.part.elmo": "ELMo 코사인 ({layers})",
        "render.part.keywords": "BM25 키워드",
        "render.part.glove": "GloVe 코사인",
        "render.weaker_below": "아래는 약한 결과입니다. 관련도 50 % 미만으로, 보통의 무작위 단어 질의가 찾는 가장 "
        "좋은 문서보다 뚜렷이 낫지 않습니다.",
        "render.as_typed": "입력한 그대로 {query}(으)로 검색하기",
        "render.no_uses": "다른 쓰임을 찾지 못했습니다.",
        "render.no_good_match": "잘 맞는 문서가 없습니다. 가장 좋은 문서도 무작위 단어들이 보통 얻는 점수보다 "
        "낫지 않습니다. 다른 단어로 찾아 보거나, 아래에서 찾은 문서를 펼쳐 보세요.",
        "render.no_match": "질의의 단어가 들어 있는 문서가 없습니다. 다른 단어로 찾아 보세요.",
        "render.unexpected": "문제가 생겼습니다({kind}: {error}). 자세한 내용은 서버 로그에 있습니다.",
        # the indexer's messages (indexer.errors.MESSAGES), here only: in English a message is its own text
        "indexer.query_empty": "검색어가 비어 있습니다. 단어를 몇 개 입력하세요.",
        "indexer.index_empty": "색인에 문서가 없습니다. 모든 문서가 삭제되었습니다.",
        "indexer.sentence_empty": "문장이 비어 있습니다. 단어를 몇 개 입력하세요.",
        "indexer.query_not_text": "검색어가 글이 아니라 {kind} 형식입니다. 문자열(str)로 주세요.",
        "indexer.sentence_not_text": "문장이 글이 아니라 {kind} 형식입니다. 문자열(str)로 주세요.",
        "indexer.query_too_long": "검색어가 {length:,}자여서 앞의 {limit:,}자만 썼습니다.",
        "indexer.sentence_too_long": "문장이 {length:,}자여서 앞의 {limit:,}자만 썼습니다.",
        "indexer.query_no_words": "검색어에 단어가 없습니다.",
        "indexer.sentence_no_words": "문장에 단어가 없습니다.",
        "indexer.no_glove_vector": "검색어의 어느 단어에도 GloVe 벡터가 없습니다.",
        "indexer.relevance_uncalibrated": "관련도를 보이지 않습니다. 문서 {n}개로는 잘 맞는 문서와 우연을 가르기에 "
        "너무 적습니다(문서는 점수 순입니다. 문서가 50개 이상이면 관련도를 보입니다).",
        "indexer.word_empty": "단어가 비어 있습니다.",
        "indexer.word_of_sentence_empty": "단어가 비어 있습니다. 문장의 단어 하나를 고르세요.",
        "indexer.word_not_in_sentence": "“{word}”은(는) 문장의 단어가 아닙니다. 문장의 단어: {words}",
        "indexer.word_repeated": "“{word}”이(가) 문장에 {n}번 나옵니다(위치 {positions}). 위치 {position}의 "
        "단어를 썼습니다. 다른 것을 보려면 위치를 고르세요.",
        "indexer.position_outside": "위치 {position!r}은(는) 문장 밖입니다(토큰 위치는 0부터 {last}까지).",
        "indexer.position_other_word": "문장의 {position}번 토큰은 “{word}”이(가) 아니라 “{token}”입니다.",
        "indexer.position_other_word_elsewhere": "문장의 {position}번 토큰은 “{word}”이(가) 아니라 “{token}”입니다. "
        "“{word}”은(는) 위치 {positions}에 있습니다.",
        "indexer.word_not_indexed": "“{word}”은(는) 색인된 문서에 나오지 않습니다. 다른 단어를 넣어 보세요.",
        "indexer.word_in_units": "“{word}”은(는) 색인의 한 단위가 아닙니다. 색인은 이를 {units}(으)로 읽습니다. "
        "그중 하나를 넣어 보세요.",
        "indexer.stopword_not_indexed": "“{word}”은(는) 색인된 문서에 나오지 않습니다(불용어는 색인하지 "
        "않습니다). 다른 단어를 넣어 보세요.",
        "indexer.punctuation_not_indexed": "“{word}”은(는) 색인된 문서에 나오지 않습니다(문장 부호는 색인하지 "
        "않습니다). 다른 단어를 넣어 보세요.",
        "indexer.word_not_in_glove": "“{word}”은(는) GloVe 어휘(단어 {size:,}개)에 없어서 GloVe로는 이웃을 "
        "찾을 수 없습니다.",
        "indexer.glove_none_named": "GloVe에서 “{word}”에 가장 가까운 단어 {n:,}개 가운데 무언가를 가리키는 단어가 "
        "없습니다(불용어와 문장 부호는 빼고 보입니다).",
        "indexer.senses_sampled": "“{word}”이(가) {n:,}번 나와서 그 가운데 무작위로 고른 {sample:,}곳만 묶었습니다.",
        "indexer.senses_capped": "뜻 {k:,}개를 요청했지만 “{word}”의 쓰임 가운데 서로 다른 것은 {n:,}곳뿐이라 "
        "그 하나하나를 뜻으로 묶었습니다.",
        "indexer.senses_thin": "쓰임 {n:,}곳을 뜻 {k:,}개로 나누면 쓰임이 {min}곳도 안 되는 뜻이 생겨 뜻을 가리기 어렵습니다. "
        "k를 auto로 두면 쓰임이 뒷받침하는 수를 찾습니다.",
        "indexer.no_token_vectors": "색인에 토큰 벡터가 없습니다(문서에 내용어가 없습니다).",
        "indexer.no_readout": "이 색인의 뜻 읽기에는 모델({name})의 언어 모델 출력층이 필요한데, 주어진 모델에는 "
        "없습니다. 모델 폴더로 색인을 여시거나 ELMo 층 표현을 고르세요.",
        "indexer.no_exact_tokens": "이 색인은 정확한 토큰 벡터 없이 만들어져서 문맥 속 단어와 단어의 뜻에는 "
        "색인의 층 섞기({mix})만 쓸 수 있습니다. 층은 기본값으로 두세요.",
        "indexer.approximate_neighbors": "이 색인은 압축된 토큰 벡터만 간직하므로({factory}, 정확한 벡터 없음) "
        "이웃과 점수가 근삿값입니다. 정확한 값을 보려면 정확한 토큰 벡터를 간직하도록 색인을 다시 만드세요.",
        "indexer.approximate_senses": "이 색인은 압축된 토큰 벡터만 간직하므로({factory}, 정확한 벡터 없음) "
        "뜻 묶음이 근삿값입니다. 정확한 묶음을 보려면 정확한 토큰 벡터를 간직하도록 색인을 다시 만드세요.",
        "layer.token": "h0 · 문자 CNN (토큰)",
        "layer.lstm": "h{j} · biLSTM {j}",
        "layer.top": " (맨 위)",
        "rep.label": "표현",
        "rep.help": "단어의 두 쓰임을 무엇으로 비교할지 고릅니다. 문맥 예측(기본값): 그 자리에 ELMo의 언어 모델이 "
        "기대하는 단어들로 비교합니다. 정방향 언어 모델은 앞 단어들을, 역방향 언어 모델은 뒤 단어들을 읽고 "
        "예측합니다. ELMo 층 섞기(논문): Peters 외(2018)가 쓴 방식 그대로 색인의 가중치로 γ Σ s_j h_j를 "
        "만듭니다. ELMo 층 하나: h0은 단어의 철자만 알고, 맨 위 층은 문장 전체를 읽었습니다.",
        "rep.prediction": "문맥 예측",
        "rep.states": "문맥 상태",
        "rep.mix": "ELMo 층 섞기 (논문)",
        "rep.layer": "ELMo {layer}",
        "preset.token": "토큰",
        "preset.top": "맨 위",
        "preset.average": "평균",
        "preset.custom": "직접",
        "mix.preset": "층 섞기",
        "mix.preset_help": "토큰 = 문맥을 보지 않는 문자 CNN 층만, 맨 위 = 마지막 biLSTM 층, 평균 = 모든 층을 "
        "똑같이, 직접 = 슬라이더로 정한 값.",
        "mix.gamma": "γ (크기)",
        "mix.gamma_help": "γ는 벡터 전체의 크기를 바꿉니다. 코사인 유사도는 크기를 보지 않으므로 순위는 "
        "그대로이고, ELMo 벡터를 다른 모델의 입력으로 쓸 때 의미가 있습니다.",
        "mix.all_zero": "적어도 한 층에는 0보다 큰 가중치를 주세요.",
        "mix.caption": "가중치 s_j의 합이 1이 되도록 슬라이더 값을 정규화합니다. h_j는 토큰의 j번째 층 벡터입니다.",
        "picker.no_words": "이 문장에는 문서 모음에 있는 단어가 없습니다. 다른 문장을 넣어 보세요.",
        "picker.not_in_sentence": "“{word}”은(는) 이 문장에 없습니다. 살펴볼 단어를 고르세요.",
        "picker.click": "문장에서 단어를 고르면 그 단어와 가장 가까운 쓰임을 보여 줍니다.",
        "picker.not_indexed": "문서 모음에 없어서 고를 수 없는 단어: {words}",
        "search.title": "검색",
        "search.query": "검색어",
        "search.placeholder": "예: {example}",
        "search.button": "검색",
        "search.examples": "예시",
        "search.advanced": "고급: 방법, 결과 수, 층 섞기",
        "search.method": "방법",
        "search.method_help": "키워드 + ELMo(기본값)는 BM25 키워드 일치와 ELMo 문장 유사도를 각각 우연과 비교해 "
        "더합니다. ELMo는 아래 층 섞기의 층을 비교합니다(기본값은 토큰 층, 곧 문자 CNN이 문맥 없이 만든 단어 "
        "벡터로, 영어 데모의 판정된 질의에서 가장 좋았습니다).",
        "search.results": "결과 수",
        "search.as_typed": "입력한 그대로 검색 (철자 고치지 않기)",
        "search.type_query": "검색어를 입력하거나 예시를 골라 문서 모음을 검색하세요.",
        "search.other_language": "이 검색어는 {language}로 쓰였고, 이 문서 모음은 {collection}로 되어 있습니다.",
        "search.in_demo": "{demo} 데모에서 검색",
        "language.en": "영어",
        "language.ko": "한국어",
        "search.relevance_help": "관련도는 목록을 정렬한 값이며 모든 방법에 같은 척도입니다. 질의와 단어 수가 같은 "
        "무작위 단어 질의 가운데, 가장 좋은 문서를 이 문서가 뚜렷한 차이로 이기는 질의의 비율입니다. 50 % 미만인 "
        "문서는 우연보다 뚜렷이 낫지 않으며, 선 아래에 약한 결과로 나옵니다. 100 %는 모든 무작위 질의를 그 차이로 "
        "이기는 문서에만 붙습니다. 가장 좋은 문서도 50 % 미만이거나(잘 맞는 문서 없음) 문서가 50개보다 적은 "
        "모음에서는(가르기에 너무 적어 안내가 나옵니다) 관련도 없이 점수 순으로 문서를 보여 줍니다.",
        "search.caption": "관련도 순으로 매긴 문서들입니다. 문서마다 가장 잘 맞는 문장과 찾은 까닭을 함께 보여 줍니다.",
        "search.glove_caption": "같은 문서들을 고정된 GloVe 벡터(문맥과 상관없이 단어마다 벡터 하나)로 순위를 "
        "매긴 결과입니다.",
        "method.hybrid": "키워드 + ELMo {layers}",
        "method.elmo": "ELMo {layers}만",
        "layers.token": "토큰 층",
        "layers.top": "맨 위 층",
        "layers.average": "모든 층",
        "layers.custom": "직접 정한 층 섞기",
        "indexer.searched_for": "{query}(으)로 검색했습니다({changes}: 입력한 그대로의 단어가 든 문서가 없습니다).",
        "method.keywords": "키워드 (BM25)",
        "method.glove": "GloVe (고정 벡터 기준선)",
        "wic.title": "문맥 속 단어",
        "wic.caption": "ELMo는 같은 단어라도 문장마다 다르게 읽습니다. 고른 단어와 가장 가까운 문서 모음 속 "
        "쓰임들, 그 자리에 ELMo의 언어 모델이 기대하는 단어들, 그리고 어느 문장에서나 같은 GloVe의 가장 가까운 "
        "단어들을 보여 줍니다. 문장과 단어, 표현은 답 아래에서 바꿀 수 있습니다.",
        "wic.question_heading": "질문",
        "wic.by": "{representation}(으)로 찾은 가장 가까운 쓰임:",
        "wic.expects_heading": "이 자리에서 모델이 기대하는 단어",
        "expect.forward": "앞 단어들을 읽고",
        "expect.backward": "뒤 단어들을 읽고",
        "expect.rare": "(드문 단어)",
        "expect.start": "(문장의 시작)",
        "expect.end": "(문장의 끝)",
        "expect.caption": "정방향 언어 모델이 이 자리 앞의 단어들만 읽고 가장 그럴듯하다고 본 단어 열 개(단어마다 그 확률)와, 역방향 "
        "언어 모델이 뒤의 단어들만 읽고 본 열 개입니다. 문맥 예측은 이 기대로 쓰임을 비교합니다. “(드문 단어)”는 "
        "모델의 어휘에 없는 모든 단어를 뜻합니다.",
        "wic.compared_heading": "두 쓰임의 비교",
        "wic.compared_tab": "A 대 B",
        "wic.compared_caption": "표현마다 A의 “{a}”와 B의 “{b}” 사이의 코사인입니다(1: 같은 벡터).",
        "wic.column_representation": "표현",
        "wic.column_cosine": "코사인",
        "wic.mix_is_average": "색인의 ELMo 층 섞기는 층에 {weights}, γ = {gamma}를 줍니다. 곧 층들의 단순 "
        "평균입니다. Peters 외는 과제마다 s_j와 γ를 학습하지만, 이 값들은 학습한 것이 아닙니다.",
        "wic.mix_weights": "색인의 ELMo 층 섞기는 층에 {weights}, γ = {gamma}를 줍니다.",
        "wic.readout_centred": "문맥 예측은 “{word}”의 두 쓰임을 문서 모음 속 쓰임들의 평균을 기준으로 비교하므로, "
        "뜻이 다른 쓰임은 0보다 낮을 수 있습니다.",
        "wic.examples": "**예시:**",
        "wic.compare": "두 번째 문장과 비교",
        "wic.sentence": "문장 {side}",
        "wic.type_sentence": "문장을 입력하세요.",
        "wic.word_of": "문장 {side}의 단어",
        "wic.neighbours": "이웃 수",
        "wic.same_word": "같은 단어만",
        "wic.same_word_help": "같은 단어의 쓰임만 보여 줍니다. 각 문장의 단어가 어느 뜻으로 쓰였는지 "
        "드러납니다. 끄면 어떤 단어든 가장 가까운 쓰임을 보여 줍니다.",
        "wic.elmo_heading": "ELMo · 문장 {side}의 “{word}”",
        "wic.glove_heading": "GloVe · 가장 가까운 단어",
        "wic.glove_caption": "문장과 상관없이 단어마다 벡터 하나.",
        "wic.column_word": "단어",
        "wic.column_similarity": "유사도",
        "wic.tab": "{side} · {word}",
        "wic.glove_tab": "GloVe",
        "wic.layers_heading": "층마다",
        "wic.layers_caption": "표현마다(문맥 예측, 색인의 섞기 `{mix}`, 층 하나씩) 찾은, 같은 단어의 가장 가까운 "
        "쓰임 {k}개입니다. Peters 외(2018, §5.3)에 따르면 첫 "
        "biLSTM 층은 문법을 더 많이 담아 품사가 같은 쓰임을 모으고, 맨 위 층은 뜻을 더 많이 담아 뜻이 같은 쓰임을 "
        "모읍니다. 데모 문서에 손으로 붙인 표지(문서 옆의 `labels.tsv`)가 있는 쓰임만 셉니다. 토큰 층은 한 단어의 "
        "모든 쓰임에 같은 벡터를 주므로 그 순서에는 의미가 없습니다.",
        "wic.layers_of": "**{side} · “{word}”**: 뜻 *{sense}*, 품사 {pos}",
        "wic.layers_unlabelled": "{side}: 데모에는 “{word}”의 이 쓰임에 대한 표지가 없습니다. 표지가 붙은 문장(예시 "
        "문장 그대로)이어야 셀 수 있습니다.",
        "wic.column_same_pos": "같은 품사",
        "wic.column_same_sense": "같은 뜻",
        "wic.column_senses": "가까운 순서의 뜻",
        "wic.column_chance": "우연",
        "wic.column_best": "최대",
        "wic.column_verdict": "판정",
        "wic.yardstick_caption": "우연: 이웃이 이 문서 모음 속 “{word}”의 쓰임에서 무작위로 뽑혔다면 뜻 *{sense}*인 것이 "
        "몇 개일지입니다(표지가 붙은 쓰임 {total}개 중 {in_sense}개). 최대: 이웃 모두, 단 {in_sense}개까지. 우연과 반 개 "
        "이내로 차이 나면 우연 수준으로 봅니다.",
        "wic.yardstick": "같은 뜻(*{sense}*): {counted}개 중 {count}개, 우연 {chance}, 최대 {best}: {verdict}.",
        "wic.leaders": "여기서 같은 뜻을 가장 많이 찾은 표현: {names} ({counted}개 중 {count}개).",
        "wic.below_chance": "여기서 우연보다 못한 표현: {names}.",
        "wic.example_wrong": "**이 모델은 자기 예시를 틀립니다**: {names}에서 가장 가까운 쓰임 가운데 *{sense}*인 것이 "
        "“{word}”의 쓰임을 무작위로 뽑을 때보다 적습니다. 모델 카드가 아직 못하는 것을 설명합니다: "
        "[소개 › {section}](about#{anchor}).",
        "wic.example_wrong_plain": "**이 모델은 자기 예시를 틀립니다**: {names}에서 가장 가까운 쓰임 가운데 *{sense}*인 "
        "것이 “{word}”의 쓰임을 무작위로 뽑을 때보다 적습니다.",
        "wic.column_typical_same": "보통 값, 같은 뜻",
        "wic.column_typical_other": "보통 값, 다른 뜻",
        "wic.typical_caption": "이 문서 모음에서 “{word}”의 보통 코사인: 표지가 붙은 두 쓰임이 같은 뜻일 때({same}쌍)와 "
        "다른 뜻일 때({other}쌍)의 중앙값입니다. A와 B의 코사인이 앞의 값에 가까우면 한 뜻의 두 쓰임 같고, 뒤의 값에 "
        "가까우면 두 뜻 같습니다.",
        "wic.no_typical": "“{word}”의 보통 코사인이 없습니다: 데모는 이 문서 모음 속 그 쓰임에 표지를 붙이지 않았습니다.",
        "yardstick.below": "우연보다 못함",
        "yardstick.at": "우연 수준",
        "yardstick.above": "우연보다 나음",
        "yardstick.tied": "동점: 판정 없음",
        "wic.other_model": "다른 모델과 나란히",
        "wic.other_model_help": "같은 문서를 다른 모델로 만든 색인(이 폴더 옆의 FOLDER-MODEL 폴더, 데모는 "
        "`python -m app --model elmo-small`이 만듭니다)에서 같은 쓰임을 찾습니다.",
        "wic.paper_model": "논문의 ELMo를 이 모델 옆에서 보려면: `python -m encoder download elmo-original` 다음 "
        "`python -m app --model elmo-original` (걸리는 시간은 README의 데모 절에 있습니다).",
        "wic.other_language": "{model} 색인은 다른 언어의 색인입니다. 같은 문서의 색인을 고르세요.",
        "wic.other_heading": "{model} 모델로 본 같은 단어",
        "wic.other_list": "**문장 {side}의 “{word}”**",
        "senses.title": "단어의 뜻",
        "senses.caption": "문서 모음에서 단어가 나온 자리마다 그 자리에 ELMo의 언어 모델이 기대하는 단어들로 "
        "읽습니다(문맥 예측, 또는 직접 고른 ELMo 층). k-평균으로 이 자리들을 뜻별로 묶어 각 묶음을 모델이 기대한 "
        "단어들로 이름 짓고, PCA로 2차원에 그립니다. 사전은 쓰지 않습니다. 뜻은 문맥에서만 나옵니다.",
        "senses.by": "{representation}(으)로 묶었습니다.",
        "senses.purity": "순도",
        "senses.purity_help": "데모에 손으로 표지를 붙인 “{word}”의 쓰임 {n}곳 가운데, 자기 묶음에서 가장 흔한 "
        "표지의 뜻에 속하는 비율입니다(1: 묶음마다 뜻이 하나).",
        "senses.column_cluster": "묶음",
        "senses.column_name": "이름",
        "senses.column_labelled": "표지의 뜻",
        "senses.unlabelled": "표지 없음",
        "senses.read_outlines": "색과 모양은 데모에 손으로 붙인 뜻이고, 점선 테두리 하나가 묶음 하나이며 번호는 "
        "카드의 번호입니다.",
        "senses.word": "단어",
        "senses.k": "뜻의 수",
        "senses.k_help": "자동은 뜻마다 쓰임이 5개 이상인 경우 가운데 쓰임의 일부만으로 다시 묶어도 가장 비슷하게 나오는 수를 고릅니다. 쓰임이 10개 이상이면 2 이상, 많아야 8입니다. 문맥 예측은 ELMo 층 섞기와 나란히 놓고 묶습니다 (모델이 그 자리에 기대하는 말과 그 자리의 낱말 자체): 뜻이 표시된 개발용 낱말에서 둘을 함께 쓸 때 뜻을 가장 잘 따릅니다.",
        "senses.auto": "자동",
        "senses.try": "해 보기",
        "senses.type_word": "단어를 입력하면 그 뜻들을 보여 줍니다.",
        "senses.occurrences": "나온 횟수",
        "senses.senses": "뜻",
        "senses.silhouette": "실루엣",
        "senses.silhouette_help": "묶음들이 얼마나 잘 나뉘었는지(코사인, -1에서 1).",
        "senses.card": "뜻 {n}",
        "senses.size_one": "{n}번 나옴",
        "senses.size_many": "{n}번 나옴",
        "senses.column_sentence": "문장",
        "senses.all": "“{word}”의 쓰임 {n}곳 전체",
        "senses.read_points": "점 하나가 단어가 나온 자리 하나입니다. 점을 가리키거나 누르면 문장을 읽을 수 "
        "있습니다. 마우스로는 스크롤해서 확대하고 끌어서 옮길 수 있습니다.",
        "senses.no_label": "두드러진 단어 없음",
        "senses.several_words": "모델은 “{typed}”을(를) 여러 단어({words})로 읽습니다. 그 가운데 하나를 넣으세요.",
        "senses.read_as": "“{word}”의 뜻을 보여 줍니다. 모델이 “{typed}”에서 읽어 낸 단어입니다.",
        "about.title": "소개",
        "about.how": "ELMo의 작동 방식",
        "about.how_text": """
ELMo(Peters 외, 2018, *Deep contextualized word representations*)는 단어마다 그 단어가 들어 있는 문장 전체에
따라 달라지는 벡터를 줍니다. 그래서 "항구에서 탄 *배*"와 "깎아 먹은 *배*"는 서로 다른 벡터를 얻습니다.
이 모델의 층은 {n_layers}개입니다.

1. **글자 → 문자 CNN (h0).** 토큰을 바이트 단위로 풀어 쓰고, 여러 폭의 합성곱과 하이웨이 층이 그 철자를
   문맥과 상관없는 토큰 벡터로 바꿉니다. 학습 때 본 적 없는 단어도 벡터를 얻지만, 어느 문장에서나 같은
   벡터입니다.
2. **biLSTM 층 (h1 … h{top}).** 정방향 LSTM은 문장을 왼쪽에서 오른쪽으로 읽으며 다음 단어를 맞히도록
   배우고, 역방향 LSTM은 오른쪽에서 왼쪽으로 읽으며 앞 단어를 맞힙니다. 층마다 두 방향의 벡터를 이어
   붙입니다. 아래 층은 문법을, 맨 위 층은 뜻을 더 많이 담기 때문에 단어의 뜻은 맨 위 층에서 가장 잘
   나뉩니다.
3. **가중합.** ELMo = γ Σⱼ sⱼ hⱼ: 과제마다 층에 대한 softmax 정규화 가중치 sⱼ와 크기 γ를 고릅니다.
   여기서는 가중치가 검색이 어느 층을 비교할지 정합니다. 검색 페이지에서 층 섞기를 바꿔 보세요.
""",
        "about.diagram_chars": "각 토큰의 글자 (UTF-8 바이트)\\n‹b› 배 ‹/b›",
        "about.diagram_cnn": "문자 CNN → 하이웨이 → 투영\\n필터 폭 {widths}가지, 필터 {filters}개",
        "about.diagram_h0": "h0: 토큰 층 ({dim}차원)\\n어느 문장에서나 같은 벡터",
        "about.diagram_lstm": "h{j}: biLSTM 층 {j}\\n정방향 →  ⊕  ← 역방향",
        "about.model_card": "모델 카드",
        "about.no_card": "모델 {name!r}에는 모델 카드(가중치 옆의 README.md)가 없습니다.",
        "about.model": "모델",
        "about.index": "색인",
        "about.fact": "항목",
        "about.value": "값",
        "fact.name": "이름",
        "fact.parameters": "매개변수",
        "fact.layers": "층",
        "fact.layers_value": "{n} (토큰 + biLSTM {lstm})",
        "fact.vector_size": "벡터 크기",
        "fact.filters": "문자 CNN 필터",
        "fact.lstm_size": "LSTM 크기",
        "fact.vocab_size": "언어 모델 어휘",
        "fact.vocab_size_value": "단어 {n}개",
        "fact.language": "언어",
        "fact.documents": "문서",
        "fact.sentences": "문장",
        "fact.tokens": "토큰",
        "fact.token_vectors": "벡터가 있는 단어",
        "fact.glove": "GloVe 기준선",
        "fact.faiss": "FAISS 색인",
        "fact.disk": "디스크 크기",
        "fact.built": "만든 때",
        "fact.corpus": "말뭉치 파일",
        "fact.folder": "폴더",
        "glove.stanford": "Stanford glove.6B {dim}차원 (Pennington 외 2014), {size}, {package} 패키지; 라이선스 "
        "{license}; 벡터 SHA-256 {sha256}",
        "glove.trained": "이 색인의 말뭉치로 학습, {size}",
        "glove.korean": "한국어 말뭉치(corpus-ko)로 직접 학습해 한국어 모델 옆에 둔 벡터, {size}; 벡터 SHA-256 {sha256}",
        "glove.size": "단어 {words}개 × {dim}",
        "about.all_stats": "전체 통계",
        "about.weights": "사용 중인 층 가중치",
        "about.weights_caption": "검색은 `{search}`로 섞은 문장 벡터를 비교합니다(판정된 데모 질의에서 가장 좋았던 "
        "섞기). 문맥 속 단어와 단어의 뜻 페이지는 언어 모델이 그 자리에 기대하는 단어들, 곧 문맥 예측으로 쓰임을 "
        "비교하며, 그 페이지들의 ELMo 층 섞기는 `{words}`입니다. 색인은 모든 층을 간직하므로 검색 페이지의 "
        "슬라이더로 질의마다 다시 섞을 수 있습니다.",
        "about.column_layer": "층",
        "about.column_weight": "가중치 s_j",
        "about.used_by_search": "검색",
        "about.used_by_words": "문맥 속 단어",
        "about.layers_heading": "층마다 담긴 것",
        "about.layers_caption": "이 모델의 고정된 층에 건 선형 탐침입니다(`{command}`, {day}; UD English EWT dev와 뜻 "
        "탐침, 표는 docs/evaluation.md). Peters 외(2018, §5.3)는 아래층에 문법이, 위층에 의미가 더 있음을 보였습니다. "
        "품사는 1층에서 가장 잘 읽히고(문맥에 따라 품사가 바뀌는 단어에서 특히), 뜻은 2층에서, 그리고 어느 층보다 문맥 "
        "예측에서 잘 읽힙니다.",
        "about.column_upos": "품사(UPOS), %",
        "about.column_upos_ambiguous": "품사, 중의적인 단어, %",
        "about.column_xpos": "Penn 태그(XPOS), %",
        "about.column_sense_auc": "뜻 탐침 AUC",
        "about.readout_row": "뜻 읽기(문맥 예측)",
        "about.readout_auc": "{auc:.1f} (중심화 {centred:.1f})",
        "about.mixes_caption": "과제가 스스로 배운 층 가중치 s_j(`{command}`, {day})를 단순 평균(각 1/{n}) 옆에 "
        "그렸습니다. 품사 태깅은 아래층에, WiC(두 쓰임이 같은 뜻인가?)는 토큰 층과 맨 위 층에 기댑니다.",
        "about.mix_pos": "품사용으로 배움",
        "about.mix_wic": "WiC용으로 배움",
        "about.mix_average": "단순 평균",
        # names of the word-in-context examples (demo.examples), shown on their buttons
        "example.bank: river vs money": "bank: 강둑 vs 은행",
        "example.play: theatre vs game": "play: 연극 vs 경기",
        "example.play: the paper's Table 4": "play: 논문의 표 4",
        "example.배: ship vs pear": "배: 선박 vs 과일",
        "example.눈: snow vs eye": "눈: 날씨 vs 신체",
        "example.말: horse vs speech": "말: 동물 vs 언어",
        "example.다리: leg vs bridge": "다리: 신체 vs 건축물",
        "example.밤: night vs chestnut": "밤: 시간 vs 열매",
    },
}


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$~<>:=&])")
_LINE_BREAKS = re.compile(r"[^\S\r\n]*(?:\r\n?|\n)\s*")  # a line break with the blank space around it
_FIELDS = string.Formatter()


class Markdown(str):
    """Markdown that is safe to show: a UI string with its values escaped, or escaped text."""


def escape(text: object) -> Markdown:
    """Text shown as itself: no markdown, no LaTeX ($), no emoji shortcodes (:...:), no links or images, no HTML
    entities (&lt; stays as typed), and its control and text-direction characters written as escapes
    (``encoder.terminal.visible_on_page``: a right-to-left override would reorder what follows); each line break,
    with the blank space around it (blank lines, carriage returns, the next line's indent), one line feed (a blank
    line would end the paragraph, and with it a bold title);
    ``Markdown`` is already safe and stays as it is."""
    if isinstance(text, Markdown):
        return text
    return Markdown(_MARKDOWN_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub("\n", visible_on_page(text))))


def fill(template: str, values: dict[str, object]) -> Markdown:
    """``template.format(**values)`` with every value shown as text: escaped (``escape``), or inside a code span of
    the template (between its backticks) with no backtick that could end the span."""
    parts, in_code = [], False
    for literal, name, spec, conversion in _FIELDS.parse(template):
        parts.append(literal)
        in_code ^= literal.count("`") % 2 == 1
        if name is not None:
            value = _FIELDS.convert_field(_FIELDS.get_field(name, (), values)[0], conversion)
            shown = value if isinstance(value, Markdown) and not spec else format(value, spec or "")
            parts.append(shown.replace("`", "\u02cb") if in_code else escape(shown))
    return Markdown("".join(parts))


def language() -> str:
    """The session's UI language ("en" before the app has settled it, e.g. outside a page)."""
    chosen = st.session_state.get(LANG_KEY)
    return chosen if chosen in STRINGS else "en"


def t(key: str, **values: object) -> Markdown:
    """The string ``key`` in the session's language, with ``values`` filled in as text (``fill``)."""
    text = STRINGS[language()].get(key, STRINGS["en"][key])
    return fill(text, values) if values else Markdown(text)


def plain(key: str, **values: object) -> str:
    """The string ``key`` in the session's language with ``values`` filled in as they are: for text shown as text,
    never as markdown (a chart's labels and fields, a table's cells before ``render.text_table`` escapes them). Its
    template holds no markdown."""
    return STRINGS[language()].get(key, STRINGS["en"][key]).format(**values)


def indexer_text(message: str | Exception) -> Markdown:
    """An indexer's message, or an error raised with one, as the session's language words it: ``indexer.<key>``
    filled with the message's values where that language has it (Korean), else as the indexer wrote it; its values
    (a word the user typed) shown as text."""
    if isinstance(message, Exception):
        message = message.args[0] if len(message.args) == 1 else str(message)
    key = getattr(message, "key", None)
    if key is None:
        return escape(message)
    return fill(STRINGS[language()].get(f"indexer.{key}", MESSAGES[key]), message.values)


def example_name(name: str) -> str:
    """A word-in-context example's button label: its name (English) or the UI language's name for it."""
    return STRINGS[language()].get(f"example.{name}", name)


def url_value(name: str) -> str | None:
    """The URL parameter ``name``'s value where the URL gives it once: a name given twice (``?lang=ko&lang=en``)
    says neither value, as the HTTP API refuses a key given twice. Every URL parameter the app reads is read so."""
    values = st.query_params.get_all(name)
    return values[0] if len(values) == 1 else None


def settle(index_language: str | None) -> str:
    """This run's UI language: the user's choice (the switch, or a ``lang`` URL parameter on the session's first
    run), else the open index's language (English when it is unknown or has no strings here). The URL keeps a
    choice that differs from the index's language, so a reload or a shared link shows the same language."""
    if not st.session_state.get(_URL_READ):
        st.session_state[_URL_READ] = True
        if url_value(URL_PARAM) in STRINGS:
            st.session_state[LANG_KEY] = url_value(URL_PARAM)
            st.session_state[_CHOSEN] = True
    default = st.session_state[_INDEX_DEFAULT] = index_language if index_language in STRINGS else "en"
    if not st.session_state.get(_CHOSEN) or st.session_state.get(LANG_KEY) not in STRINGS:
        st.session_state[LANG_KEY] = default
    if url_params():
        st.query_params[URL_PARAM] = st.session_state[LANG_KEY]
    elif URL_PARAM in st.query_params:
        del st.query_params[URL_PARAM]
    return st.session_state[LANG_KEY]


def url_params() -> dict[str, str]:
    """What the URL says about the language: ``lang`` only when it is not the one the open index suggests."""
    chosen = language()
    return {URL_PARAM: chosen} if chosen != st.session_state.get(_INDEX_DEFAULT, "en") else {}


def _chosen() -> None:
    st.session_state[_CHOSEN] = True


def language_switch() -> None:
    """The sidebar's 한국어 / English switch; using it makes the choice the session's, whatever index is open."""
    st.radio(
        LANGUAGE_LABEL, list(LANGUAGES), key=LANG_KEY, format_func=LANGUAGES.get, horizontal=True, on_change=_chosen
    )
