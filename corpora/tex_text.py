"""An inline <math> formula as the text a reader sees: "<math>\\bar{x}</math>" -> "x̄",
"<math>E = mc^2</math>" -> "E = mc^2", "<math>\\alpha \\le 10^{-6}</math>" -> "α ≤ 10^-6".

Dropping a formula cut its sentence ("where  is the sample mean"): real excerpts hold 51-158
inline formulas each (en, el, ja, vi), most of them a letter, a Greek letter or a power. Only what
plain text can show is rendered: symbols as Unicode, powers and indices with a caret and an
underscore (the parser's "×10^24" convention), fractions with a slash, fonts as their letters. A
formula with anything else (a matrix, an alignment, a command not in the tables below) or longer
than MAX_CHARS gives None, and the parser drops it as before.
"""
from __future__ import annotations

import re

MAX_CHARS = 80

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "omicron": "ο", "pi": "π", "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς",
    "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_SYMBOLS = {
    **_GREEK,
    "times": "×", "cdot": "·", "pm": "±", "mp": "∓", "div": "÷", "ast": "∗", "star": "⋆", "circ": "∘",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡",
    "sim": "∼", "simeq": "≃", "cong": "≅", "propto": "∝", "ll": "≪", "gg": "≫",
    "infty": "∞", "partial": "∂", "nabla": "∇", "hbar": "ħ", "ell": "ℓ", "prime": "′", "degree": "°",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "gets": "←", "leftrightarrow": "↔", "Rightarrow": "⇒",
    "Leftarrow": "⇐", "Leftrightarrow": "⇔", "implies": "⇒", "iff": "⇔", "mapsto": "↦",
    "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "supseteq": "⊇",
    "cup": "∪", "cap": "∩", "setminus": "∖", "emptyset": "∅", "varnothing": "∅", "forall": "∀",
    "exists": "∃", "neg": "¬", "lnot": "¬", "land": "∧", "wedge": "∧", "lor": "∨", "vee": "∨",
    "oplus": "⊕", "otimes": "⊗", "angle": "∠", "perp": "⊥", "parallel": "∥", "mid": "∣",
    "ldots": "…", "dots": "…", "cdots": "⋯", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋",
    "lceil": "⌈", "rceil": "⌉", "sum": "∑", "prod": "∏", "int": "∫", "oint": "∮", "aleph": "ℵ",
    "R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ",  # texvc's blackboard shorthands
    "{": "{", "}": "}", "|": "‖", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_",
}
_AFTER_FUNCTION = "\x00"
_FUNCTIONS = frozenset(
    "sin cos tan cot sec csc sinh cosh tanh coth arcsin arccos arctan log ln lg exp lim liminf limsup "
    "max min sup inf det gcd deg arg dim ker mod bmod Pr".split()
)
_SPACES = {",": " ", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": " ", "!": ""}
_IGNORED = frozenset(
    "left right big Big bigg Bigg bigl bigr Bigl Bigr displaystyle textstyle scriptstyle limits nolimits rm it bf".split()
)
_FONTS = frozenset(
    "mathrm text textrm textit textbf mathit mathbf boldsymbol mathsf mathtt mathcal mathfrak mathscr operatorname mbox".split()
)
_DOUBLE_STRUCK = {"N": "ℕ", "Z": "ℤ", "Q": "ℚ", "R": "ℝ", "C": "ℂ", "H": "ℍ", "P": "ℙ"}
_ACCENTS = {
    "bar": "\u0304", "overline": "\u0305", "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303",
    "widetilde": "\u0303", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308",
}
_FRACTIONS = frozenset({"frac", "tfrac", "dfrac", "cfrac"})
_ROOTS = {"": "√", "2": "√", "3": "∛", "4": "∜"}

# A prime as TeX shows it; "~" is a space; "|" as the divides sign it looks like, because a line
# holding a pipe is dropped as link or table residue (corpora/wikitext_lines.py).
_CHARS = {"'": "′", "~": " ", "|": "∣"}
_TOKEN_RE = re.compile(r"\\([A-Za-z]+|.)|([{}^_])|(\s+)|(.)", re.DOTALL)
# An operand that needs no brackets after "^", "_" or around "/": one word, number or symbol.
_SIMPLE_RE = re.compile(r"[-−+]?[√∛∜]?[\w.,′]+|.")


class _Unrenderable(Exception):
    pass


def tex_to_text(tex: str) -> str | None:
    """The formula as plain text, or None if it holds what plain text cannot show."""
    tokens = [(m.group(1), m.group(2), m.group(3), m.group(4)) for m in _TOKEN_RE.finditer(tex)]
    try:
        text, pos = _sequence(tokens, 0)
    except _Unrenderable:
        return None
    if pos != len(tokens):  # an unpaired "}"
        return None
    for glued in "(^_":  # "sin(x)", "sin^2 x": no space between a function and these
        text = text.replace(_AFTER_FUNCTION + glued, glued)
    text = " ".join(text.replace(_AFTER_FUNCTION, " ").split())
    text = text.replace("( ", "(").replace(" )", ")")  # "\left( x \right)" is "(x)"
    return text if text and len(text) <= MAX_CHARS else None


def _sequence(tokens, pos) -> tuple[str, int]:
    """Text up to a closing "}" (not consumed) or the end."""
    out: list[str] = []
    while pos < len(tokens):
        command, special, space, char = tokens[pos]
        if special == "}":
            return "".join(out), pos
        if special in ("^", "_"):
            operand, pos = _atom(tokens, pos + 1)
            out.append(special + _bracketed(operand))
            continue
        if space is not None:
            out.append(" ")
            pos += 1
            continue
        if char is not None:
            if char in "&\\":  # an alignment or a line break: a display construct
                raise _Unrenderable
            out.append(_CHARS.get(char, char))
            pos += 1
            continue
        text, pos = _atom(tokens, pos)
        out.append(text)
    return "".join(out), pos


def _atom(tokens, pos) -> tuple[str, int]:
    """One operand: a {group}, a command with its arguments, or one character."""
    if pos >= len(tokens):
        raise _Unrenderable
    command, special, space, char = tokens[pos]
    if space is not None:
        return _atom(tokens, pos + 1)
    if special == "{":
        text, pos = _sequence(tokens, pos + 1)
        if pos >= len(tokens):
            raise _Unrenderable  # unclosed group
        return text, pos + 1
    if special is not None or char is None and command is None:
        raise _Unrenderable
    if char is not None:
        return _CHARS.get(char, char), pos + 1
    return _command(command, tokens, pos + 1)


def _command(name: str, tokens, pos) -> tuple[str, int]:
    if name in _SYMBOLS:
        return _SYMBOLS[name], pos
    if name in _FUNCTIONS:  # "sin x", "sin(x)", "log n": a space only before what is not a bracket
        return ("mod" if name == "bmod" else name) + _AFTER_FUNCTION, pos
    if name in _SPACES:
        return _SPACES[name], pos
    if name in _IGNORED:
        return "", pos
    if name in _FONTS:
        return _atom(tokens, pos)
    if name == "mathbb":
        text, pos = _atom(tokens, pos)
        return "".join(_DOUBLE_STRUCK.get(c, c) for c in text), pos
    if name in _ACCENTS:
        text, pos = _atom(tokens, pos)
        mark = _ACCENTS[name]
        return "".join(c + mark if not c.isspace() else c for c in text), pos
    if name in _FRACTIONS:
        numerator, pos = _atom(tokens, pos)
        denominator, pos = _atom(tokens, pos)
        return f"{_bracketed(numerator)}/{_bracketed(denominator)}", pos
    if name == "sqrt":
        degree = ""
        if pos < len(tokens) and tokens[pos][3] == "[":
            close = next((k for k in range(pos + 1, len(tokens)) if tokens[k][3] == "]"), None)
            if close is None:
                raise _Unrenderable
            degree = "".join(t[3] or "" for t in tokens[pos + 1 : close]).strip()
            pos = close + 1
        if degree not in _ROOTS:
            raise _Unrenderable
        radicand, pos = _atom(tokens, pos)
        return _ROOTS[degree] + _bracketed(radicand), pos
    raise _Unrenderable  # \begin, \matrix, \over, a command these tables do not know


def _bracketed(operand: str) -> str:
    operand = operand.strip()
    if _SIMPLE_RE.fullmatch(operand) or _is_wrapped(operand):
        return operand
    return f"({operand})"


def _is_wrapped(operand: str) -> bool:
    """"(3+5)": one pair of brackets around the whole operand already."""
    if not (operand.startswith("(") and operand.endswith(")")):
        return False
    depth = 0
    for k, char in enumerate(operand):
        depth += (char == "(") - (char == ")")
        if depth == 0 and k < len(operand) - 1:
            return False  # "(a)+(b)": the first pair closes early
    return True
