"""The ClassAd language: HTCondor's expressions and ads, used for job
Requirements and Rank, host START policies and matchmaking.

Modules:
  values     UNDEFINED and ERROR, type helpers, canonical spelling of values
             (reals as HTCondor prints them, escaped strings, lists), and the
             budget of one evaluation (steps, time, string sizes)
  operators  the implementation of every operator (the table of their
             spellings and precedences is in ``nodes``), three-valued logic
  grammar.lark  the expression grammar, written out (lark's notation; a test
             holds the reader to it)
  parser     parse(), parse_ad(), parse_ads(): text to expression nodes, a
             lone literal or name read by hand; results cached by text
  grammar    the rest: a recursive-descent reader of the grammar that builds
             the nodes as it reads
  nodes      expression nodes and their unparsing; the operator table:
             spelling, precedence, strictness and arity of every operator
  compound   the nodes only parsed text has (selections, subscripts, unary
             operators, conditionals, lists, nested ads)
  evaluator  the evaluator, loaded by the first evaluation: each node is
             compiled once into a closure; attribute scoping MY/TARGET
  ad         ClassAd, a case-insensitive mapping of names to expressions
  functions  the built-in function registry; type, conversion, math, list
             and evaluation functions
  strfuncs   string, string-list and version functions
  regexfuncs regular-expression functions
  timefuncs  the functions of time values (absTime, relTime, formatTime...)
  timing     regular-expression matching with a time limit (SIGALRM)
  envargs    argsToList, listToArgs, envV1ToV2, mergeEnvironment, userMap
  timevals   absolute and relative time values, their literals and arithmetic
  match      symmetric_match() and rank() for matchmaking
  draft      DraftAd: a job ad being built, of plain values and expression
             texts, made a ClassAd only when one is needed

The names below are loaded with their module when first used.

Typical use::

    from gridtools.classad import parse, ClassAd
    job = ClassAd({"Owner": "alice", "RequestMemory": 1024})
    parse('TARGET.Memory >= RequestMemory').eval(job, machine)
"""

import sys

#: where each name this package offers is defined; a module is loaded when one of its
#: names is first asked for, so that importing one module of the package (``values``,
#: ``draft``) does not load the others
_EXPORTS = {
    "ClassAd": "ad", "accepts": "match", "rank": "match", "symmetric_match": "match",
    "Expr": "nodes", "ClassAdSyntaxError": "parser", "parse": "parser", "parse_ad": "parser",
    "parse_ads": "parser", "ERROR": "values", "UNDEFINED": "values", "unparse_value": "values",
}


def unparse(item):
    """The canonical text of an expression, a ClassAd or a value."""
    from gridtools.classad.values import unparse_value
    return unparse_value(item)


def __getattr__(name):
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{where}"
    __import__(module)
    value = getattr(sys.modules[module], name)
    globals()[name] = value
    return value


__all__ = [
    "parse", "parse_ad", "parse_ads", "ClassAd", "Expr", "UNDEFINED", "ERROR",
    "unparse", "symmetric_match", "rank", "accepts", "ClassAdSyntaxError",
]
