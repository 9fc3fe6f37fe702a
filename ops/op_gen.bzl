"""Generated op builders: one genrule per op family, run by //ops:op_gen."""

def gen_op_builders(name, families):
    """Declares genrules writing gen/<family>.h and gen/<family>.cc.

    Args:
      name: prefix of the genrule names.
      families: schema file stems ("array_ops", ...).
    Returns:
      (headers, sources) lists of the generated files.
    """
    headers = []
    sources = []
    for family in families:
        h = "gen/%s.h" % family
        cc = "gen/%s.cc" % family
        native.genrule(
            name = "%s_%s" % (name, family),
            outs = [h, cc],
            cmd = "$(location :op_gen) %s $(location %s) $(location %s)" % (family, h, cc),
            tools = [":op_gen"],
            message = "Generating ops::%s builders" % family,
        )
        headers.append(h)
        sources.append(cc)
    return headers, sources
