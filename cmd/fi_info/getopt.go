package main

import (
	"fmt"
	"io"
	"strings"
)

// A small getopt_long(3) with GNU semantics, enough to parse fi_info's
// command line exactly as the C tool does: short options may be bundled
// (-lv) and take attached or separate arguments (-pudp, -p udp), long
// options take "=value" or a separate argument and may be abbreviated to a
// unique prefix, non-options are skipped, "--" ends the options. Errors
// are reported with glibc's messages.

type argKind int

const (
	noArg argKind = iota
	requiredArg
)

type longOpt struct {
	name string
	has  argKind
	val  rune // the equivalent short option, or 0 (--version)
}

type opt struct {
	name rune   // short option, or 0 for a long-only option
	long string // long name when given in long form
	arg  string
}

type getopt struct {
	prog   string
	args   []string
	short  string
	long   []longOpt
	stderr io.Writer

	i    int    // index of the next argument
	rest string // remaining bundled short options of args[i-1]
}

// next returns the next option; ok is false at the end. err is non-nil for
// an invalid option or a missing argument, after the message was written.
func (g *getopt) next() (o opt, ok bool, err error) {
	if g.rest == "" {
		for {
			if g.i >= len(g.args) {
				return opt{}, false, nil
			}
			a := g.args[g.i]
			g.i++
			if a == "--" {
				g.i = len(g.args)
				return opt{}, false, nil
			}
			if strings.HasPrefix(a, "--") {
				return g.longOption(a)
			}
			if len(a) > 1 && a[0] == '-' {
				g.rest = a[1:]
				break
			}
			// A non-option: skipped (GNU getopt permutes it to the end).
		}
	}
	c := rune(g.rest[0])
	g.rest = g.rest[1:]
	idx := strings.IndexRune(g.short, c)
	if c == ':' || idx < 0 {
		fmt.Fprintf(g.stderr, "%s: invalid option -- '%c'\n", g.prog, c)
		return opt{}, true, errUsage
	}
	if idx+1 < len(g.short) && g.short[idx+1] == ':' {
		if g.rest != "" {
			o = opt{name: c, arg: g.rest}
			g.rest = ""
			return o, true, nil
		}
		if g.i >= len(g.args) {
			fmt.Fprintf(g.stderr, "%s: option requires an argument -- '%c'\n", g.prog, c)
			return opt{}, true, errUsage
		}
		o = opt{name: c, arg: g.args[g.i]}
		g.i++
		return o, true, nil
	}
	return opt{name: c}, true, nil
}

func (g *getopt) longOption(a string) (opt, bool, error) {
	body := a[2:]
	name, value, hasValue := strings.Cut(body, "=")
	var match *longOpt
	var candidates []*longOpt
	for i := range g.long {
		lo := &g.long[i]
		if lo.name == name {
			match = lo
			candidates = nil
			break
		}
		if strings.HasPrefix(lo.name, name) {
			candidates = append(candidates, lo)
		}
	}
	if match == nil {
		switch len(candidates) {
		case 0:
			fmt.Fprintf(g.stderr, "%s: unrecognized option '%s'\n", g.prog, a)
			return opt{}, true, errUsage
		case 1:
			match = candidates[0]
		default:
			var b strings.Builder
			fmt.Fprintf(&b, "%s: option '%s' is ambiguous; possibilities:", g.prog, a)
			for _, c := range candidates {
				fmt.Fprintf(&b, " '--%s'", c.name)
			}
			b.WriteByte('\n')
			io.WriteString(g.stderr, b.String())
			return opt{}, true, errUsage
		}
	}
	o := opt{name: match.val, long: match.name}
	switch match.has {
	case noArg:
		if hasValue {
			fmt.Fprintf(g.stderr, "%s: option '--%s' doesn't allow an argument\n", g.prog, match.name)
			return opt{}, true, errUsage
		}
	case requiredArg:
		switch {
		case hasValue:
			o.arg = value
		case g.i < len(g.args):
			o.arg = g.args[g.i]
			g.i++
		default:
			fmt.Fprintf(g.stderr, "%s: option '--%s' requires an argument\n", g.prog, match.name)
			return opt{}, true, errUsage
		}
	}
	return o, true, nil
}
