"""About page: what each layer of the model holds (the per-layer probes, and the layer weights tasks learn beside the
plain average: Peters et al. 2018, §5.3) where the model ships them, how ELMo turns text into vectors, the model's
and the index's facts and layer weights, then the model card at the page's full width (no box of its own to
scroll)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from app import i18n, state, url
from app.i18n import LANGUAGES, plain, t
from app.model_card import LayerFindings, card_file, card_parts, layer_findings, model_dir
from app.render import layer_weights, text_table
from app.settings import CHART_COLOURS
from app.widgets import layer_name
from encoder import BiLMConfig

# config.json entries described elsewhere on the page; the others are listed (``config_fact``).
SHOWN_CONFIG_KEYS = {*BiLMConfig.__dataclass_fields__, "name", "format_version"}

index = state.current_index()
url.write({})  # the page has no state of its own; the URL keeps the collection and the language
elmo = index.elmo
manifest = index.manifest
n_layers = elmo.n_layers


def glove_description(glove: dict) -> str:
    """Which GloVe the index compares with: Stanford's (source, licence, SHA-256), ours for Korean, a file, or trained
    on the corpus."""
    size = plain("glove.size", words=f"{glove['vocab_size']:,}", dim=glove["dim"])
    if glove["source"] == "stanford":
        return plain(
            "glove.stanford",
            dim=glove["dim"],
            size=size,
            package=glove["package"],
            license=glove["license"],
            sha256=glove["sha256"],
        )
    if glove["source"] == "trained":
        return plain("glove.trained", size=size)
    if glove["source"] == "korean":
        return plain("glove.korean", size=size, sha256=glove["sha256"])
    return f"{glove['source']}, {size}" + (f", SHA-256 {glove['sha256']}" if "sha256" in glove else "")


def config_fact(key: str, value: object) -> tuple[str, object]:
    """A config.json entry as the fact sheet shows it: by its name in the UI language where it has one."""
    if key == "vocab_size":
        return plain("fact.vocab_size"), plain("fact.vocab_size_value", n=f"{value:,}")
    if key == "language":
        return plain("fact.language"), LANGUAGES.get(str(value), value)
    return key.replace("_", " "), value  # one of the user's own (a perplexity, say)


def table(facts: dict[str, object]) -> None:
    """A two-column fact sheet of text (``text_table``: a corpus file's or a folder's name shows as itself); a long
    cell (the GloVe baseline's source) wraps, read whole on a phone too."""
    text_table([{plain("about.fact"): name, plain("about.value"): value} for name, value in facts.items()])


def diagram(weights: list[float], gamma: float) -> str:
    """Graphviz source of the ELMo pipeline, drawn with this model's layers and the index's weights."""
    lines = [
        "digraph elmo {",
        "rankdir=BT; nodesep=0.4;",
        'node [shape=box, style="rounded,filled", fontname="sans-serif"];',
        f'chars [label="{t("about.diagram_chars")}", fillcolor="#f0f2f6"];',
        f'cnn [label="{t("about.diagram_cnn", widths=len(elmo.config.filters), filters=elmo.config.n_filters)}", '
        'fillcolor="#ffe8cc"];',
        "chars -> cnn;",
        f'h0 [label="{t("about.diagram_h0", dim=elmo.dim)}", fillcolor="#ffd8a8"];',
        "cnn -> h0;",
    ]
    previous = "h0"
    for j in range(1, n_layers):
        lines.append(f'h{j} [label="{t("about.diagram_lstm", j=j)}", fillcolor="#d0ebff"];')
        lines.append(f"{previous} -> h{j};")
        previous = f"h{j}"
    lines.append(f'mix [label="ELMo = γ Σ s_j h_j\\nγ = {gamma:.2f}", shape=ellipse, fillcolor="#d3f9d8"];')
    lines += [f'h{j} -> mix [label=" s{j} = {w:.2f}", style=dashed, color="#868e96"];' for j, w in enumerate(weights)]
    return "\n".join([*lines, "}"])


def what_each_layer_holds(found: LayerFindings) -> None:
    """The per-layer probe table, and the scalar mixes POS tagging and WiC learned beside the plain average."""
    st.header(t("about.layers_heading"))
    probes, mixes = st.columns([3, 2], gap="large")
    command, day = found.probes_by
    probes.caption(t("about.layers_caption", command=command, day=day))
    layers = [layer_name(j, n_layers) for j in range(n_layers)]
    columns = [plain(f"about.column_{name}") for name in ("upos", "upos_ambiguous", "xpos", "sense_auc")]
    rows = [
        {plain("about.column_layer"): layer, **dict(zip(columns, (f"{v:.1f}" for v in values)))}
        for layer, *values in zip(layers, found.upos, found.upos_ambiguous, found.xpos, found.sense_auc)
    ]
    readout = plain("about.readout_auc", auc=found.readout_sense_auc, centred=found.readout_sense_auc_centred)
    rows.append(
        {plain("about.column_layer"): plain("about.readout_row"), **dict.fromkeys(columns[:3], ""), columns[3]: readout}
    )
    text_table(rows, probes)
    command, day = found.mixes_by
    mixes.caption(t("about.mixes_caption", command=command, day=day, n=n_layers))
    mixes.altair_chart(
        layer_weights(
            layers,
            {
                plain("about.mix_pos"): found.pos_mix,
                plain("about.mix_wic"): found.wic_mix,
                plain("about.mix_average"): [1 / n_layers] * n_layers,
            },
            plain("about.column_weight"),
        ),
        width="stretch",
    )


st.title(t("about.title"))
directory = model_dir(manifest)
findings = layer_findings(directory) if directory is not None else None
if findings is not None:  # the paper's §5.3 for this model, first: the clearest lesson of the page
    what_each_layer_holds(findings)
how, numbers = st.columns([3, 2], gap="large")

with how:
    st.header(t("about.how"))
    st.markdown(t("about.how_text", n_layers=n_layers, top=n_layers - 1))
    st.graphviz_chart(diagram(list(index.layer_mix.weights), index.layer_mix.gamma))

with numbers:
    st.header(t("about.model"))
    extra = dict(
        config_fact(key, value)
        for key, value in elmo.info.items()
        if key not in SHOWN_CONFIG_KEYS and isinstance(value, (str, int, float))
    )
    facts = {
        plain("fact.name"): elmo.name,
        plain("fact.parameters"): f"{sum(p.numel() for p in elmo.model.parameters()):,}",
        plain("fact.layers"): plain("fact.layers_value", n=n_layers, lstm=n_layers - 1),
        plain("fact.vector_size"): elmo.dim,
        plain("fact.filters"): elmo.config.n_filters,
        plain("fact.lstm_size"): elmo.config.lstm_dim,
        **extra,
    }
    table(facts)

    st.header(t("about.index"))
    stats = index.stats()
    counts, glove = stats["counts"], stats["glove"]
    table(
        {
            plain("fact.documents"): f"{counts['documents']:,}",
            plain("fact.sentences"): f"{counts['sentences']:,}",
            plain("fact.tokens"): f"{counts['tokens']:,}",
            plain("fact.token_vectors"): f"{counts['token_vectors']:,}",
            plain("fact.glove"): glove_description(glove),
            plain("fact.faiss"): ", ".join(f"{kind}: {entry['factory']}" for kind, entry in stats["indexes"].items()),
            plain("fact.disk"): f"{stats['disk_bytes'] / 2**20:.1f} MiB",
            plain("fact.built"): stats["created_at"],
            plain("fact.corpus"): ", ".join(c["name"] for c in stats["corpus"]),
            plain("fact.folder"): stats["path"],
        }
    )
    with st.expander(t("about.all_stats")):
        st.json(stats)

    st.header(t("about.weights"))
    st.caption(t("about.weights_caption", search=index.search_mix.describe(), words=index.layer_mix.describe()))
    layers = [layer_name(j, n_layers) for j in range(n_layers)]
    layer, search, words = plain("about.column_layer"), plain("about.used_by_search"), plain("about.used_by_words")
    st.bar_chart(
        pd.DataFrame({layer: layers, search: index.search_mix.weights, words: index.layer_mix.weights}),
        x=layer,
        y=[search, words],
        y_label=plain("about.column_weight"),
        color=list(CHART_COLOURS[:2]),
        stack=False,
        horizontal=True,  # the layers' names read across, whole
    )

st.header(t("about.model_card"))
card = card_file(directory, i18n.language()) if directory is not None else None
if card is None:
    st.info(t("about.no_card", name=elmo.name))
else:  # at the page's width, as a document: no box of its own to scroll
    for part in card_parts(card.read_text(encoding="utf-8"), directory):
        if isinstance(part, Path):
            st.image(str(part))
        else:
            st.markdown(part)
