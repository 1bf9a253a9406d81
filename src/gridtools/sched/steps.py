"""A constraint taken apart into numbered steps, as HTCondor's match analysis
does it (condor_q -better-analyze and -reverse-analyze), as pure functions.

``steps(ad, expr, inline)`` walks an expression and numbers every clause
worth evaluating on its own: comparisons, the logical operators (``[0] &&
[1]``) and the attributes named in ``inline`` replaced by their expressions.
``numbered(ad, attr, inline)`` lists them (``    [0]    : clause``);
``reduced(ad, attr, inline, targets, kind)`` counts the targets each step
matches, drops the steps that do not change the result (a conjunction one
side of which decides it, a side of a disjunction that is always true) and
prints the table HTCondor prints ("Step  Matched  Condition"), constant steps
as ``always`` or ``never``. ``referenced(ad, attr, hidden)`` lists the
attributes of the ad an expression refers to with their expressions, and the
names it refers to in the other ad; ``target_values(names, ad, target)`` the
values of those in a target ad.

``detail`` holds HTCondor's analysis detail flags: NOPRUNE (its ``noprune``: the
table lists every step, `` * `` before those that decide the result and blanks
before the others, ``n/a`` before the pruned ones with DIAGNOSTIC too) and
IFTHENELSE (its ``ifthenelse``: an ``ifThenElse(c, a, b)`` call is a step of its
three arguments, ``ifThenElse([0],[1],[2])``, a constant condition making it the
step of the argument it picks, the other one pruned).
"""

from gridtools.classad.nodes import Attr, Binary, Call, Literal, Paren, Scoped
from gridtools.classad.values import truth

_COMPARISONS = {"==", "!=", "=?=", "=!=", "<", "<=", ">", ">="}
_LOGIC = {"!": 1, "||": 2, "&&": 3}
_TRUTHY = ["?", "F", "T", "", "u", "e", "?", "f", "t", "s"]

#: HTCondor's analysis detail flags (its detail_* values)
NOPRUNE, IFTHENELSE, DIAGNOSTIC, SHOW_WORK = 0x04, 0x08, 0x40, 0x80


class Step:
    __slots__ = ("tree", "depth", "logic", "left", "right", "grip", "effective", "label",
                 "count", "constant", "hard", "variable", "dont_care")

    def __init__(self, tree, label, depth, logic=0):
        self.tree, self.label, self.depth, self.logic = tree, label, depth, logic
        self.left = self.right = self.grip = self.effective = -1
        self.count, self.constant, self.hard = 0, False, -1
        self.variable = self.dont_care = False

    def made_label(self):
        if self.logic == 1:
            return None if self.left < 0 else f" ! [{self.left}]"
        if self.logic in (2, 3):
            return f"[{self.left}] {'||' if self.logic == 2 else '&&'} [{self.right}]"
        if self.logic == 5:
            return f"ifThenElse([{self.left}],[{self.right}],[{self.grip}])"
        return None

    def text(self):
        return self.label or self.made_label() or self.tree.unparse()


def _kind(expr):
    """(children, logic operator, push the node as a step, children are logical)."""
    from gridtools.classad import compound
    cls = expr.__class__
    if cls is Binary:
        symbol = expr.op.symbol
        if symbol in _COMPARISONS:
            return (expr.left, expr.right), 0, True, False
        if symbol in _LOGIC:
            return (expr.left, expr.right), _LOGIC[symbol], True, True
        return (expr.left, expr.right), 0, None, False
    if cls is compound.Unary:
        if expr.op.symbol == "!":
            return (expr.operand,), 1, True, True
        return (expr.operand,), 0, None, False
    if cls is Paren:
        return (expr.inner,), 0, False, True
    if cls is compound.Cond:
        return (expr.cond, expr.then, expr.other), 0, None, False
    if cls is compound.Elvis:
        return (expr.cond, expr.other), 0, None, False
    if cls is compound.Select:
        return (expr.base,), 0, None, False
    return (), 0, None, False


def steps(ad, expr, inline, detail=0):
    """The numbered steps of ``expr`` (an expression of ``ad``); the attributes named in
    ``inline`` (lower case) stand for their expressions."""
    found = []
    _walk(ad, expr, {n.lower() for n in inline}, found, True, 0, detail)
    return found


def _walk(ad, expr, inline, found, must_store, depth, detail=0):
    cls = expr.__class__
    label = ""
    children, logic, push, logical = _kind(expr)
    if cls is Call and detail & IFTHENELSE and expr.name.lower() == "ifthenelse" and len(expr.args) == 3:
        children, logic, push, logical = tuple(expr.args), 5, True, True
    child_depth = depth + 1 if cls is Paren else depth
    variable = False
    if cls is Attr:
        variable = expr.key == "currenttime"
        if inline and expr.key in inline and ad.lookup(expr.name) is not None:
            children, inline = (ad.lookup(expr.name),), None
    elif cls is Literal:
        label = expr.unparse()
    elif cls is Call:
        variable = expr.name.lower() == "time" and not expr.args
        label = expr.unparse() if must_store else expr.name + "()"
    if push is None:
        push = must_store
    indexes = []
    for child in children:
        index, child_variable = _walk(ad, child, inline, found, logical, child_depth, detail)
        indexes.append(index)
        variable = variable or child_variable
    me = -1
    if push:
        if len(children) == 1 and indexes[0] >= 0:
            me = indexes[0]
            if me == len(found) - 1 and logic == 1:        # ! rewrites the step below it
                step = found[-1]
                step.tree, step.logic, step.depth = expr, 1, depth
                if step.label:
                    step.label = "! " + step.label
        else:
            me = len(found)
            step = Step(expr, label, depth, logic)
            step.variable = variable
            step.left, step.right, step.grip = (indexes + [-1, -1, -1])[:3]
            found.append(step)
    elif len(children) == 1:
        me = indexes[0]
    return me, variable


def _step_label(index, width):
    return f"[{index}]      "[:width + 2]


def numbered(ad, attr, inline, detail=0):
    """The steps of the ad's ``attr``, one ``    [n]    : clause`` line each."""
    tree = ad.lookup(attr)
    if tree is None:
        return ""
    inline = [n for n in inline if n.lower() != attr.lower()]
    out = []
    for n, step in enumerate(steps(ad, tree, inline, detail)):
        text = step.made_label()
        if text is None:
            text = step.label or step.tree.unparse()
            if step.left >= 0:
                text = f"[{step.left}] {step.tree.unparse()}"
        out.append(f"    {_step_label(n, 4)} : {text}\n")
    return "".join(out)


def references(ad, tree):
    """(names of the ad's attributes ``tree`` refers to, followed through their own
    expressions; names it refers to in the other ad), each in the order HTCondor sorts
    them (ignoring case)."""
    from gridtools.classad import compound
    mine, theirs, seen = {}, {}, set()

    def walk(expr):
        cls = expr.__class__
        if cls is Attr or (cls is Scoped and expr.scope.lower() == "my"):
            if cls is Attr and ad.lookup(expr.name) is None:
                theirs.setdefault(expr.key, expr.name)
                return
            mine.setdefault(expr.key, expr.name)
            if expr.key not in seen and ad.lookup(expr.name) is not None:
                seen.add(expr.key)
                walk(ad.lookup(expr.name))
            return
        if cls is Scoped:
            if expr.scope.lower() == "target":
                theirs.setdefault(expr.key, expr.name)
            return
        if cls is compound.Select and isinstance(expr.base, Attr) and expr.base.key in ("target", "my"):
            walk(Scoped(expr.base.name.upper(), expr.name))
            return
        for child in expr.children():
            walk(child)

    walk(tree)
    order = lambda names: [names[k] for k in sorted(names)]    # noqa: E731
    return order(mine), order(theirs)


def referenced(ad, attr, hidden):
    """(``    Name = expression`` lines of the ad's attributes that ``attr`` refers to,
    but those in ``hidden``; the names it refers to in the other ad)."""
    tree = ad.lookup(attr)
    if tree is None:
        return "", []
    mine, theirs = references(ad, Attr(attr))
    hidden = {n.lower() for n in hidden}
    out = []
    for name in mine:
        if name.lower() in hidden or ad.lookup(name) is None:
            continue
        unit = {"requestdisk": " (kb)", "requestmemory": " (mb)"}.get(name.lower(), "")
        out.append(f"    {name} = {ad.lookup(name).unparse()}{unit}\n")
    if any(n.lower() == "availablegpus" for n in theirs) and not any(n.lower() == "gpus" for n in theirs):
        theirs = sorted(theirs + ["GPUs"], key=str.lower)
    return "".join(out), theirs


def target_values(names, ad, target):
    """(the target's name, ``    TARGET.Name = value`` lines of the names it defines)."""
    from gridtools.classad.values import unparse_value
    out = []
    for name in names:
        if target.lookup(name) is None:
            continue
        unit = {"disk": " (kb)", "memory": " (mb)"}.get(name.lower(), "")
        out.append(f"    TARGET.{name} = {unparse_value(target.eval(name, ad))}{unit}\n")
    if not out:
        return "", ""
    title = target.eval("Name")
    if not isinstance(title, str):
        cluster = target.eval("ClusterId")
        if type(cluster) is int:
            proc = target.eval("ProcId")
            title = f"Job {cluster}.{proc if type(proc) is int else 0}"
        else:
            title = "Target"
    return title, "".join(out)


def _holds(tree, my, target):
    try:
        return truth(tree.eval(my, target)) is True
    except Exception:  # noqa: BLE001 - an expression that fails to evaluate: no match
        return False


def _prune(subs, index):
    if index >= 0:
        subs[index].dont_care = True
        for child in (subs[index].left, subs[index].right, subs[index].grip):
            _prune(subs, child)


def _propagate_constants(subs):
    for ix, s in enumerate(subs):
        effective = irrelevant = -1
        soft = False
        if s.logic:
            hard, softs = [], []
            for child in (s.left, s.right, s.grip):
                c = subs[child] if child >= 0 else None
                hard.append(c.hard if c is not None and c.constant else 2)
                softs.append(bool(c is not None and c.constant and c.variable))
            hl, hr, sl, sr = hard[0], hard[1], softs[0], softs[1]
            mark = lambda h, v: _TRUTHY[h + 1 + v * 6]    # noqa: E731
            if s.logic == 1:
                if not s.label and s.left >= 0:
                    s.label = f" ! [{s.left}]{mark(hl, sl)}"
            elif s.logic == 2:
                if hl == 1 or hr == 1:
                    s.constant, s.hard, s.variable = True, 1, sl and sr
                    if hl == 1:
                        s.effective = effective = s.left
                        irrelevant, soft = s.right, sl and (hr or sr)
                    else:
                        s.effective = effective = s.right
                        irrelevant, soft = s.left, sr and (hl or sl)
                elif hl == 0 and hr == 0:
                    s.constant, s.hard, s.variable = True, 0, sl or sr
                elif hl == 0:
                    s.effective = effective = s.right
                    irrelevant, soft = s.left, sl
                elif hr == 0:
                    s.effective = effective = s.left
                    irrelevant, soft = s.right, sr
                s.label = f"[{s.left}]{mark(hl, sl)} || [{s.right}]{mark(hr, sr)}"
            elif s.logic == 3:
                if hl == 0 or hr == 0:
                    s.constant, s.hard, s.variable = True, 0, sl or sr
                    if hl == 0:
                        s.effective = effective = s.left
                        irrelevant, soft = s.right, sl
                    else:
                        s.effective = effective = s.right
                        irrelevant, soft = s.left, sr
                elif hl == 1 and hr == 1:
                    s.constant, s.hard, s.variable = True, 1, sl or sr
                elif hl == 1:
                    s.effective = effective = s.right
                elif hr == 1:
                    s.effective = effective = s.left
                s.label = f"[{s.left}]{mark(hl, sl)} && [{s.right}]{mark(hr, sr)}"
            elif s.logic == 5:
                hg, sg = hard[2], softs[2]
                if hl in (0, 1):
                    s.effective = effective = s.right if hl else s.grip
                    if effective >= 0 and subs[effective].constant:
                        s.constant, s.variable, s.hard = True, sl, subs[effective].hard
                    irrelevant, soft = (s.grip if hl else s.right), sl
                s.label = f"ifThenElse([{s.left}]{mark(hl, sl)}, [{s.right}]{mark(hr, sr)}, [{s.grip}]{mark(hg, sg)})"
        if effective >= 0:
            if irrelevant < 0:
                irrelevant = s.right if effective == s.left else s.left if effective == s.right else -1
                soft = soft or s.variable
            while subs[effective].effective >= 0:
                effective = subs[effective].effective
            s.effective = effective
        if irrelevant >= 0 and not soft:
            _prune(subs, irrelevant)


def _follow(subs, ix):
    while subs[ix].effective >= 0:
        ix = subs[ix].effective
    return ix


def reduced(ad, attr, inline, targets, kind, detail=0):
    """HTCondor's table of the steps of the ad's ``attr`` that decide its match against
    ``targets`` (``kind``: what they are, "Slot" or "Cluster"), with how many each matches
    (with NOPRUNE in ``detail``, every step, marked)."""
    tree = ad.lookup(attr)
    if tree is None:
        return ""
    inline = [n for n in inline if n.lower() != attr.lower()]
    subs = steps(ad, tree, inline, detail)
    for s in subs:
        s.constant = not references(ad, s.tree)[1]
        if s.constant:
            s.hard = 1 if _holds(s.tree, ad, None) else 0
    _propagate_constants(subs)
    for s in subs:                                   # effective steps back up the chain
        changed = False
        for side in ("left", "right", "grip"):
            child = getattr(s, side)
            if child >= 0 and subs[child].effective >= 0:
                setattr(s, side, subs[child].effective)
                changed = True
        if changed:
            s.label = ""
    everyone = len(targets)
    for ix, s in enumerate(subs):
        if s.effective >= 0 or s.dont_care or s.constant:
            continue
        left, right = s.left, s.right
        if left >= 0 and right >= 0 and s.logic in (2, 3, 5):
            effective = prune = -1
            if s.logic == 3:
                if subs[left].count == 0:
                    effective = left
                elif subs[right].count == 0:
                    effective = right
            elif s.logic == 5:
                pass
            elif subs[left].count == everyone:
                effective, prune = left, right
            elif subs[right].count == everyone:
                effective, prune = right, left
            elif subs[left].count == 0 and subs[right].count:
                effective, prune = right, left
            elif subs[left].count and subs[right].count == 0:
                effective, prune = left, right
            if prune >= 0:
                _prune(subs, prune)
            if effective >= 0:
                s.effective = _follow(subs, effective)
            else:
                _relabel(subs, s)
        s.count = sum(1 for t in targets if _holds(s.tree, ad, t))
        if left >= 0 and right >= 0 and s.logic == 5:
            _relabel(subs, s)
        if left >= 0 and right >= 0 and s.logic == 3:
            effective = -1
            if subs[left].count == s.count:
                effective = left
                if subs[right].count > s.count:
                    subs[right].dont_care = True
            elif subs[right].count == s.count:
                effective = right
                if subs[left].count > s.count:
                    subs[left].dont_care = True
            if effective >= 0:
                s.effective = _follow(subs, effective)
                s.label = ""
            else:
                _relabel(subs, s)
    indent = "   " if detail & NOPRUNE else ""
    out = [f"{indent}       {kind + 's':>5}\n", f"{indent}Step   Matched  Condition\n",
           f"{indent}----- --------- ---------\n"]
    for ix, s in enumerate(subs):
        prefix = ""
        if detail & NOPRUNE:
            prefix = " * "
            if s.dont_care:
                prefix = "n/a" if detail & DIAGNOSTIC else "   "
            elif s.effective >= 0:
                prefix = "   "
        elif s.effective >= 0 or s.dont_care:
            continue
        if s.constant:
            value = "always" if s.hard else "never"
            if s.variable:
                value = "now" if s.hard else "not now"
            out.append(f"{prefix}{_step_label(ix, 3)} {value:>9}  {s.text()}\n")
        else:
            out.append(f"{prefix}{_step_label(ix, 3)} {s.count:9d}  {s.text()}\n")
    return "".join(out)


def _relabel(subs, s):
    for side in ("left", "right"):
        child = getattr(s, side)
        if subs[child].effective >= 0:
            setattr(s, side, subs[child].effective)
            s.label = ""
