"""An inline <math> formula as the text a reader sees: "<math>\\bar{x}</math>" -> "x̄",
"<math>E = mc^2</math>" -> "E = mc^2", "<math>\\alpha \\le 10^{-6}</math>" -> "α ≤ 10^-6".

Dropping a formula cut its sentence ("where  is the sample mean"): real excerpts hold 51-158
inline formulas each (en, el, ja, vi), most of them a letter, a Greek letter or a power. Only what
plain text can show is rendered: symbols as Unicode, powers and indices with a caret and an
underscore (the parser's "×10^24" convention), fractions with a slash, fonts as their letters. A
formula with anything else (a matrix, an alignment, a command not in the tables below) or longer
than MAX_CHARS gives None, and the parser drops it as before.

Plain text needs brackets that TeX's layout makes unnecessary: an operand of several terms is
bracketed ("x^(n+1)", "√(2π)", "(a+b)/2"), a fraction is bracketed when a factor follows it
("(1/2)ap", not "1/2ap"), and a script ends at a space ("μ_0 J", not "μ_0J"). As in TeX, a space
after a command only ends the command; relations and binary operators are spaced on both sides.
"""
from __future__ import annotations

import re
import unicodedata

MAX_CHARS = 80

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "omicron": "ο", "pi": "π", "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς",
    "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
# Relations and binary operators: spaced on both sides ("a ≤ b"), whatever the source's spacing.
_OPERATORS = {
    "times": "×", "cdot": "·", "pm": "±", "mp": "∓", "div": "÷", "ast": "∗", "star": "⋆", "circ": "∘",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡",
    "sim": "∼", "simeq": "≃", "cong": "≅", "propto": "∝", "ll": "≪", "gg": "≫",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "gets": "←", "leftrightarrow": "↔", "Rightarrow": "⇒",
    "Leftarrow": "⇐", "Leftrightarrow": "⇔", "implies": "⇒", "iff": "⇔", "mapsto": "↦",
    "longrightarrow": "⟶", "longleftarrow": "⟵", "Longrightarrow": "⟹", "Longleftrightarrow": "⟺",
    "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂", "sub": "⊂", "subseteq": "⊆", "sube": "⊆",
    "supset": "⊃", "supseteq": "⊇", "cup": "∪", "cap": "∩", "setminus": "∖", "land": "∧", "wedge": "∧",
    "lor": "∨", "vee": "∨", "oplus": "⊕", "otimes": "⊗", "perp": "⊥", "parallel": "∥", "mid": "∣",
    "vdash": "⊢", "models": "⊨", "bmod": "mod",
}
_SYMBOLS = {
    **_GREEK,
    "infty": "∞", "infin": "∞", "partial": "∂", "nabla": "∇", "hbar": "ħ", "ell": "ℓ", "prime": "′",
    "degree": "°", "emptyset": "∅", "varnothing": "∅", "forall": "∀", "exists": "∃", "exist": "∃",
    "neg": "¬", "lnot": "¬", "angle": "∠", "triangle": "△", "bot": "⊥", "top": "⊤", "Box": "□",
    "bigstar": "★", "Re": "ℜ", "Im": "ℑ", "aleph": "ℵ", "colon": ":",
    "ldots": "…", "dots": "…", "dotsc": "…", "dotsb": "⋯", "dotsm": "⋯", "cdots": "⋯",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "sum": "∑", "prod": "∏", "int": "∫", "iint": "∬", "iiint": "∭", "oint": "∮",
    "{": "{", "}": "}", "|": "‖", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_",
}
_FUNCTIONS = frozenset(
    "sin cos tan cot sec csc sinh cosh tanh coth arcsin arccos arctan log ln lg exp lim liminf limsup "
    "max min sup inf det gcd deg arg dim ker mod Pr".split()
)
_SPACES = {",": " ", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": " ", "!": ""}
_SIZES = frozenset("big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr left right".split())
_IGNORED = frozenset("displaystyle textstyle scriptstyle limits nolimits rm it bf".split())
_FONTS = frozenset(
    "mathrm text textrm textit textbf mathit mathbf bold boldsymbol mathsf mathtt mathcal mathfrak mathscr "
    "operatorname mbox".split()
)
_DOUBLE_STRUCK = {"N": "ℕ", "Z": "ℤ", "Q": "ℚ", "R": "ℝ", "C": "ℂ", "H": "ℍ", "P": "ℙ"}
_SYMBOLS.update({letter: _DOUBLE_STRUCK[letter] for letter in "RNZQC"})  # texvc's shorthands: \R is \mathbb{R}
_ACCENTS = {
    "bar": "\u0304", "overline": "\u0305", "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303",
    "widetilde": "\u0303", "vec": "\u20d7", "overrightarrow": "\u20d7", "dot": "\u0307", "ddot": "\u0308",
    "acute": "\u0301", "grave": "\u0300", "check": "\u030c", "breve": "\u0306",
}
_FRACTIONS = frozenset({"frac", "tfrac", "dfrac", "cfrac"})
_OVER_ARGUMENT = frozenset({"stackrel", "overset", "underset"})  # the symbol shown, without what is set over it
_ROOTS = {"": "√", "2": "√", "3": "∛", "4": "∜"}
_CHARS = {"'": "′", "~": " ", "|": "∣"}  # "|" as the divides sign: a line holding a pipe is residue
_RELATIONS = frozenset("=<>")  # spaced like the relations above: "x = 1" whether written "x=1" or not
_OPERATION_STARTS = frozenset("=<>+-−")  # after a fraction: "1/2 + x" needs no brackets
_SPACED_RELATION_RE = re.compile(r" ([=<>]) ")

_TOKEN_RE = re.compile(r"\\([A-Za-z]+|.)|([{}^_])|(\s+)|(.)", re.DOTALL)
# Operands that need no brackets: a number, a run of letters (with primes), one symbol.
_NUMBER_RE = re.compile(r"[-−+]?\d[\d.,]*")
_LETTERS_RE = re.compile(r"(?:[^\W\d_][\u0300-\u036f\u20d0-\u20ff]*)+′*")
_TIGHT_AFTER = frozenset(" )]},;:.!?⟩")  # what may follow a fraction without brackets


class _Unrenderable(Exception):
    pass


class _Piece:
    """Text with what it was: the assembly brackets fractions and spaces scripts by their neighbours."""

    __slots__ = ("text", "kind")

    def __init__(self, text: str, kind: str = "text"):
        self.text, self.kind = text, kind  # kind: text, fraction, script, operator, function, space


def tex_to_text(tex: str) -> str | None:
    """The formula as plain text, or None if it holds what plain text cannot show."""
    tokens = [(m.group(1), m.group(2), m.group(3), m.group(4)) for m in _TOKEN_RE.finditer(tex)]
    try:
        pieces, pos = _sequence(tokens, 0)
    except (_Unrenderable, RecursionError):  # RecursionError: braces nested thousands deep
        return None
    if pos != len(tokens):  # an unpaired "}"
        return None
    text = unicodedata.normalize("NFC", " ".join(_assemble(pieces).split()))  # as the page's text is
    text = text.replace("( ", "(").replace(" )", ")")  # "\left( x \right)" is "(x)"
    return text if text and len(text) <= MAX_CHARS else None


def _assemble(pieces: list[_Piece]) -> str:
    out: list[str] = []
    for k, piece in enumerate(pieces):
        following = _next_text(pieces, k + 1)
        text = piece.text
        if piece.kind == "fraction" and following and following[0] not in _TIGHT_AFTER and not _is_operator_start(pieces, k + 1):
            text = f"({text})"  # "(1/2)ap", "(1/(n-1))∑", "(a/b)^2"
        elif piece.kind == "script" and following and (following[0].isalnum() or following[0] in "√∛∜∫∑∏∂∇"):
            text += " "  # "μ_0 J", "c^2 Δt^2", "a^n b^n"
        elif piece.kind == "operator":
            text = f" {text} "
        elif piece.kind == "function":
            text = " " + text + ("" if following[:1] in ("(", "^", "_") else " ")
        out.append(text)
    return "".join(out)


def _next_text(pieces: list[_Piece], k: int) -> str:
    while k < len(pieces) and not pieces[k].text:
        k += 1
    return pieces[k].text if k < len(pieces) else ""


def _is_operator_start(pieces: list[_Piece], k: int) -> bool:
    while k < len(pieces) and not pieces[k].text:
        k += 1
    return k < len(pieces) and (pieces[k].kind == "operator" or pieces[k].text[:1] in _OPERATION_STARTS)


def _sequence(tokens, pos) -> tuple[list[_Piece], int]:
    """Pieces up to a closing "}" (not consumed) or the end."""
    pieces: list[_Piece] = []
    while pos < len(tokens):
        command, special, space, char = tokens[pos]
        if special == "}":
            return pieces, pos
        if command in ("over", "choose"):  # "{a \over b}": an infix fraction of the whole group
            rest, pos = _sequence(tokens, pos + 1)
            top, bottom = _assemble(pieces).strip(), _assemble(rest).strip()
            if command == "over":
                return [_Piece(f"{_bracketed(top, True)}/{_bracketed(bottom, True)}", "fraction")], pos
            return [_Piece(f"C({top}, {bottom})")], pos
        if special in ("^", "_"):
            operand, pos = _operand(tokens, pos + 1)
            if special == "^" and operand == "∘":
                pieces.append(_Piece("°"))  # 90^\circ
            else:  # relations stay tight in a script: "∑_(i=1)^n"
                operand = _SPACED_RELATION_RE.sub(r"\1", operand)
                pieces.append(_Piece(special + _bracketed(operand), "script"))
            continue
        if space is not None:
            pieces.append(_Piece(" ", "space"))
            pos += 1
            continue
        if char is not None:
            if char in "&\\":  # an alignment or a line break: a display construct
                raise _Unrenderable
            pieces.append(_Piece(char, "operator") if char in _RELATIONS else _Piece(_CHARS.get(char, char)))
            pos += 1
            continue
        piece, pos = _atom(tokens, pos)
        pieces.append(piece)
    return pieces, pos


def _operand(tokens, pos) -> tuple[str, int]:
    piece, pos = _atom(tokens, pos)
    return piece.text.strip(), pos


def _atom(tokens, pos) -> tuple[_Piece, int]:
    """One operand: a {group}, a command with its arguments, or one character."""
    if pos >= len(tokens):
        raise _Unrenderable
    command, special, space, char = tokens[pos]
    if space is not None:
        return _atom(tokens, pos + 1)
    if special == "{":
        pieces, pos = _sequence(tokens, pos + 1)
        if pos >= len(tokens):
            raise _Unrenderable  # unclosed group
        if len(pieces) == 1 and pieces[0].kind == "fraction":
            return pieces[0], pos + 1  # "{a \over b}" stays a fraction for its neighbours
        return _Piece(_assemble(pieces)), pos + 1
    if special is not None:
        raise _Unrenderable
    if char is not None:
        return _Piece(_CHARS.get(char, char)), pos + 1
    pos += 1
    if command.isalpha() and pos < len(tokens) and tokens[pos][2] is not None:
        pos += 1  # a space after a control word only ends it, as in TeX ("\alpha x" is αx)
    return _command(command, tokens, pos)


def _command(name: str, tokens, pos) -> tuple[_Piece, int]:
    if name in _OPERATORS:
        return _Piece(_OPERATORS[name], "operator"), pos
    if name in _SYMBOLS:
        return _Piece(_SYMBOLS[name]), pos
    if name in _FUNCTIONS:  # "sin x", "sin(x)", "log n"
        return _Piece(name, "function"), pos
    if name in _SPACES:
        return _Piece(_SPACES[name], "space"), pos
    if name in _SIZES:
        if pos < len(tokens) and tokens[pos][3] == ".":  # "\left." is no bracket at all
            pos += 1
        return _Piece(""), pos
    if name in _IGNORED:
        return _Piece(""), pos
    if name in _FONTS:
        if pos < len(tokens) and tokens[pos][3] == "*":  # \operatorname*{argmax}
            pos += 1
        text, pos = _operand(tokens, pos)
        return _Piece(text), pos
    if name == "mathbb":
        text, pos = _operand(tokens, pos)
        return _Piece("".join(_DOUBLE_STRUCK.get(c, c) for c in text)), pos
    if name in _ACCENTS:
        text, pos = _operand(tokens, pos)
        if name in ("vec", "overrightarrow") and len(text) > 1 and text.isalnum():
            return _Piece(text + _ACCENTS[name]), pos  # "AB⃗": one arrow over the pair
        return _Piece(_accented(text, _ACCENTS[name])), pos
    if name in _FRACTIONS:
        numerator, pos = _operand(tokens, pos)
        denominator, pos = _operand(tokens, pos)
        return _Piece(f"{_bracketed(numerator, True)}/{_bracketed(denominator, True)}", "fraction"), pos
    if name == "binom":
        top, pos = _operand(tokens, pos)
        bottom, pos = _operand(tokens, pos)
        return _Piece(f"C({top}, {bottom})"), pos
    if name in _OVER_ARGUMENT:
        _, pos = _operand(tokens, pos)
        return _atom(tokens, pos)
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
        radicand, pos = _operand(tokens, pos)
        # A root covers one number or one letter without brackets: "√2", "√x", but "√(2π)", "√(ab)".
        simple = _NUMBER_RE.fullmatch(radicand) or (len(radicand) == 1)
        return _Piece(_ROOTS[degree] + (radicand if simple else f"({radicand})")), pos
    raise _Unrenderable  # \begin, \matrix, a command these tables do not know


def _accented(text: str, mark: str) -> str:
    """The mark after each letter or digit and the marks it has ("ᾱ" + bar: α with two macrons);
    never on a bracket or an operator."""
    if "_" in text or "^" in text:
        raise _Unrenderable  # \bar{x_1}: which part is barred is layout plain text lacks
    out: list[str] = []
    for char in text:
        if unicodedata.combining(char) and out:
            # a mark already on the cluster: the new one (appended last) must stay after it
            if out[-1] == mark and len(out) >= 2:
                out.insert(len(out) - 1, char)
            else:
                out.append(char)
            continue
        out.append(char)
        if char.isalnum():
            out.append(mark)
    return "".join(out)


def _bracketed(operand: str, scripts_bind: bool = False) -> str:
    """The operand, bracketed unless it is one number, one run of letters or one symbol; around "/",
    also one such term with its scripts ("d_1/d_2", "x_i^2/2"), which bind tighter than a slash."""
    operand = operand.strip()
    if _NUMBER_RE.fullmatch(operand) or _LETTERS_RE.fullmatch(operand) or len(operand) == 1 or _is_wrapped(operand):
        return operand
    if scripts_bind and _SCRIPTED_TERM_RE.fullmatch(operand):
        return operand
    return f"({operand})"


_SCRIPTED_TERM_RE = re.compile(
    r"(?:{n}|{l}|.)(?:[_^](?:{n}|{l}|.|\([^()]*\)))+".format(n=_NUMBER_RE.pattern, l=_LETTERS_RE.pattern)
)


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
