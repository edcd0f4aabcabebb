"""About page: the model card, the index's statistics and layer weights, and how ELMo turns text into vectors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from app import state
from app.widgets import layer_name
from encoder import BiLMConfig
from encoder.elmo import resolve_model

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
    size = f"{glove['vocab_size']:,} words × {glove['dim']}"
    if glove["source"] == "stanford":
        return (
            f"Stanford's glove.6B {glove['dim']}-d (Pennington et al. 2014), {size}, from {glove['package']}; "
            f"licence {glove['license']}; vectors SHA-256 {glove['sha256']}"
        )
    if glove["source"] == "trained":
        return f"trained on this index's corpus, {size}"
    return f"{glove['source']}, {size}" + (f", SHA-256 {glove['sha256']}" if "sha256" in glove else "")


def table(facts: dict[str, object]) -> None:
    """A two-column fact sheet."""
    st.dataframe(
        pd.DataFrame({"": list(facts), "value": [str(v) for v in facts.values()]}), hide_index=True, width="stretch"
    )


def diagram(weights: list[float], gamma: float) -> str:
    """Graphviz source of the ELMo pipeline, drawn with this model's layers and the index's weights."""
    lines = [
        "digraph elmo {",
        "rankdir=BT; nodesep=0.4;",
        'node [shape=box, style="rounded,filled", fontname="sans-serif"];',
        'chars [label="characters of each token\\n‹b› b a n k ‹/b›", fillcolor="#f0f2f6"];',
        f'cnn [label="char-CNN → highway → projection\\n{len(elmo.config.filters)} filter widths, '
        f'{elmo.config.n_filters} filters", fillcolor="#ffe8cc"];',
        "chars -> cnn;",
        f'h0 [label="h0: token layer ({elmo.dim} dims)\\nsame vector in every sentence", fillcolor="#ffd8a8"];',
        "cnn -> h0;",
    ]
    previous = "h0"
    for j in range(1, n_layers):
        lines.append(f'h{j} [label="h{j}: biLSTM layer {j}\\nforward →  ⊕  ← backward", fillcolor="#d0ebff"];')
        lines.append(f"{previous} -> h{j};")
        previous = f"h{j}"
    lines.append(f'mix [label="ELMo = γ Σ s_j h_j\\nγ = {gamma:.2f}", shape=ellipse, fillcolor="#d3f9d8"];')
    lines += [f'h{j} -> mix [label=" s{j} = {w:.2f}", style=dashed, color="#868e96"];' for j, w in enumerate(weights)]
    return "\n".join([*lines, "}"])


st.title("About")
card, numbers = st.columns([3, 2], gap="large")

with card:
    st.header("How ELMo works")
    st.markdown(f"""
ELMo (Peters et al., 2018, *Deep contextualized word representations*) gives every word a vector that
depends on the whole sentence it is in, so *bank* by a river and *bank* on the high street get different vectors.
This model has {n_layers} layers:

1. **Characters → char-CNN (h0).** Each token is spelled out as bytes; convolutions of several widths and a
   highway layer turn the spelling into a context-free token vector. Any word gets one, even one never seen in
   training, but it is the same in every sentence.
2. **biLSTM layers (h1 … h{n_layers - 1}).** A forward LSTM reads the sentence left to right and learns to predict
   the next word; a backward LSTM reads right to left and predicts the previous one. Each layer's two directions
   are concatenated. Lower layers carry more syntax, the top layer more meaning, which is why the top layer
   separates the senses of a word best.
3. **Weighted sum.** ELMo = γ Σⱼ sⱼ hⱼ: a task picks softmax-normalised weights sⱼ over the layers and a scale γ.
   Here the weights decide which layers search compares; try the presets on the Search page.
""")
    st.graphviz_chart(diagram(list(index.layer_mix.weights), index.layer_mix.gamma))

    st.header("Model card")
    directory = model_dir()
    readme = directory / "README.md" if directory is not None else None
    if readme is not None and readme.is_file():
        with st.container(border=True, height=500):
            st.markdown(readme.read_text(encoding="utf-8"))
    else:
        st.info(f"The model {elmo.name!r} has no model card (README.md beside its weights).")

with numbers:
    st.header("Model")
    extra = {
        key: value
        for key, value in elmo.info.items()
        if key not in SHOWN_CONFIG_KEYS and isinstance(value, (str, int, float))
    }
    facts = {
        "name": elmo.name,
        "parameters": f"{sum(p.numel() for p in elmo.model.parameters()):,}",
        "layers": f"{n_layers} (token + {n_layers - 1} biLSTM)",
        "vector size": elmo.dim,
        "char-CNN filters": elmo.config.n_filters,
        "LSTM size": elmo.config.lstm_dim,
        **extra,
    }
    table(facts)

    st.header("Index")
    stats = index.stats()
    counts, glove = stats["counts"], stats["glove"]
    table(
        {
            "documents": f"{counts['documents']:,}",
            "sentences": f"{counts['sentences']:,}",
            "tokens": f"{counts['tokens']:,}",
            "words with vectors": f"{counts['token_vectors']:,}",
            "GloVe baseline": glove_description(glove),
            "FAISS indexes": ", ".join(f"{kind}: {entry['factory']}" for kind, entry in stats["indexes"].items()),
            "size on disk": f"{stats['disk_bytes'] / 2**20:.1f} MiB",
            "built": stats["created_at"],
            "corpus files": ", ".join(c["name"] for c in stats["corpus"]),
            "folder": stats["path"],
        }
    )
    with st.expander("All statistics"):
        st.json(stats)

    st.header("Layer weights in use")
    st.caption(
        f"Search compares passages mixed as `{index.search_mix.describe()}` (the best mix on the judged "
        f"demo queries); word in context and senses use `{index.layer_mix.describe()}`. The index keeps "
        "every layer, so the sliders on the Search page re-mix them per query."
    )
    layers = [layer_name(j, n_layers) for j in range(n_layers)]
    st.bar_chart(
        pd.DataFrame(
            {
                "layer": layers * 2,
                "weight s_j": [*index.search_mix.weights, *index.layer_mix.weights],
                "used by": ["search"] * n_layers + ["words in context"] * n_layers,
            }
        ),
        x="layer",
        y="weight s_j",
        color="used by",
        stack=False,
    )
