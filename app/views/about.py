"""About page: the model card, the index's statistics and layer weights, and how ELMo turns text into vectors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from app import i18n, state
from app.i18n import t
from app.model_card import card_file, card_parts
from app.settings import CHART_COLOURS
from app.widgets import layer_name
from encoder import BiLMConfig
from encoder.model_files import resolve_model

# config.json entries described elsewhere on the page; any others (e.g. a perplexity) are listed as they are.
SHOWN_CONFIG_KEYS = {*BiLMConfig.__dataclass_fields__, "name", "format_version"}

index = state.current_index()
elmo = index.elmo
manifest = index.manifest
n_layers = elmo.n_layers


def model_dir() -> Path | None:
    """Where the index's model lives (its card is the README.md there); None for published hdf5 weights."""
    source = manifest.model.source
    try:
        return resolve_model(*source).folder if isinstance(source, list) else resolve_model(source).folder
    except FileNotFoundError:
        return None


def glove_description(glove: dict) -> str:
    """Which GloVe the index compares with: Stanford's (source, licence, SHA-256), a file, or trained on the corpus."""
    size = t("glove.size", words=f"{glove['vocab_size']:,}", dim=glove["dim"])
    if glove["source"] == "stanford":
        return t(
            "glove.stanford",
            dim=glove["dim"],
            size=size,
            package=glove["package"],
            license=glove["license"],
            sha256=glove["sha256"],
        )
    if glove["source"] == "trained":
        return t("glove.trained", size=size)
    return f"{glove['source']}, {size}" + (f", SHA-256 {glove['sha256']}" if "sha256" in glove else "")


def table(facts: dict[str, object]) -> None:
    """A two-column fact sheet."""
    st.dataframe(
        pd.DataFrame({"": list(facts), t("about.value"): [str(v) for v in facts.values()]}),
        hide_index=True,
        width="stretch",
    )


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


st.title(t("about.title"))
card, numbers = st.columns([3, 2], gap="large")

with card:
    st.header(t("about.how"))
    st.markdown(t("about.how_text", n_layers=n_layers, top=n_layers - 1))
    st.graphviz_chart(diagram(list(index.layer_mix.weights), index.layer_mix.gamma))

    st.header(t("about.model_card"))
    directory = model_dir()
    card = card_file(directory, i18n.language()) if directory is not None else None
    if card is not None:
        with st.container(border=True, height=500):
            for part in card_parts(card.read_text(encoding="utf-8"), directory):
                if isinstance(part, Path):
                    st.image(str(part))
                else:
                    st.markdown(part)
    else:
        st.info(t("about.no_card", name=elmo.name))

with numbers:
    st.header(t("about.model"))
    extra = {
        key: value
        for key, value in elmo.info.items()
        if key not in SHOWN_CONFIG_KEYS and isinstance(value, (str, int, float))
    }
    facts = {
        t("fact.name"): elmo.name,
        t("fact.parameters"): f"{sum(p.numel() for p in elmo.model.parameters()):,}",
        t("fact.layers"): t("fact.layers_value", n=n_layers, lstm=n_layers - 1),
        t("fact.vector_size"): elmo.dim,
        t("fact.filters"): elmo.config.n_filters,
        t("fact.lstm_size"): elmo.config.lstm_dim,
        **extra,
    }
    table(facts)

    st.header(t("about.index"))
    stats = index.stats()
    counts, glove = stats["counts"], stats["glove"]
    table(
        {
            t("fact.documents"): f"{counts['documents']:,}",
            t("fact.sentences"): f"{counts['sentences']:,}",
            t("fact.tokens"): f"{counts['tokens']:,}",
            t("fact.token_vectors"): f"{counts['token_vectors']:,}",
            t("fact.glove"): glove_description(glove),
            t("fact.faiss"): ", ".join(f"{kind}: {entry['factory']}" for kind, entry in stats["indexes"].items()),
            t("fact.disk"): f"{stats['disk_bytes'] / 2**20:.1f} MiB",
            t("fact.built"): stats["created_at"],
            t("fact.corpus"): ", ".join(c["name"] for c in stats["corpus"]),
            t("fact.folder"): stats["path"],
        }
    )
    with st.expander(t("about.all_stats")):
        st.json(stats)

    st.header(t("about.weights"))
    st.caption(t("about.weights_caption", search=index.search_mix.describe(), words=index.layer_mix.describe()))
    layers = [layer_name(j, n_layers) for j in range(n_layers)]
    layer, search, words = t("about.column_layer"), t("about.used_by_search"), t("about.used_by_words")
    st.bar_chart(
        pd.DataFrame({layer: layers, search: index.search_mix.weights, words: index.layer_mix.weights}),
        x=layer,
        y=[search, words],
        y_label=t("about.column_weight"),
        color=list(CHART_COLOURS[:2]),
        stack=False,
    )
