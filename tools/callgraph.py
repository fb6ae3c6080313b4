#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The call graph of the built objects, read from their symbols and
relocations (objdump), as tools/check-layout.sh reads its call arrows.

  tools/callgraph.py reach [--build DIR] [--entry SYM] [--list]
      what one reconcile cycle reaches, starting from the daemon's entry
      point (np_daemon_reconcile): functions, files and folders, and how
      often a call goes back to a file or folder it left
  tools/callgraph.py circles [--build DIR]
      the call circles between files (strongly connected components of the
      file graph), each judged by the module rule (below); exit 1 when one
      breaks it

A node is a function or a data object of one object file; an edge is a
reference from one to the other: a call, a tail call, a function's address
taken, a table of function pointers. A call through a pointer is not seen,
except through the tables named *_ops (the enforcer backends' vtables,
which the cycle calls through d->enf->ops): they are roots of their own,
as the cycle reaches them. Functions of the C library and other libraries
are not followed.

"Goes back" counts the distinct caller-unit -> callee-unit pairs (unit: a
file, or a folder) that lie on a circle: the callee reaches the caller
again. With the folders' layers, a call back to a folder happens only
through a callback.

The module rule (circles): files may call each other in a circle only when
they are one module: all of them include one *_internal.h of their folder,
and every function or object one of them uses from another has the same
prefix (np_WORD_: np_daemon_, np_plan_, np_systemd_).
"""
import argparse
import glob
import os
import re
import subprocess
import sys

RELOC = re.compile(r'^([0-9a-f]+)\s+(R_\S+)\s+(\S+)$')
SYMLINE = re.compile(r'^([0-9a-f]+) (.{7}) (\S+)\t([0-9a-f]+)\s+(.*)$')
LABEL = re.compile(r'^([0-9a-f]+) <(.+)>:$')
INSN = re.compile(r'^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$')
DIRECT = re.compile(r'^[0-9a-f]+ <([^>+]+)>$')


def base(name):
    """f.cold, f.isra.0, f.part.0, f.constprop.0, counter.1 -> f"""
    if name.startswith('.'):
        return name
    return name.split('.')[0]


def run(*args):
    return subprocess.run(args, check=True, capture_output=True,
                          text=True).stdout


class Obj:
    def __init__(self, path, src):
        self.path = path
        self.src = src  # userspace/daemon/apply/reconcile.c
        self.defs = {}  # name -> (global?, kind F/O)
        self.bysec = {}  # section -> [(start, end, name)]
        self.refs = []  # (from name, target name or (section, addr))
        self.read()

    def read(self):
        for line in run('objdump', '-tw', self.path).splitlines():
            m = SYMLINE.match(line)
            if not m:
                continue
            value, flags, sec, size, name = m.groups()
            name = name.split()[-1]
            kind = flags[6]
            if kind not in 'FO' or sec in ('*UND*', '*ABS*', '*COM*'):
                continue
            b = base(name)
            glob_ = flags[0] == 'g'
            old = self.defs.get(b)
            self.defs[b] = (glob_ or (old and old[0]), 'F' if kind == 'F' else 'O')
            v = int(value, 16)
            self.bysec.setdefault(sec, []).append((v, v + max(int(size, 16), 1), b))
        relocs = {}  # section -> {offset: (type, target)}
        sec = None
        for line in run('objdump', '-rw', self.path).splitlines():
            if line.startswith('RELOCATION RECORDS FOR ['):
                sec = line[len('RELOCATION RECORDS FOR ['):].rstrip(']:')
                continue
            m = RELOC.match(line)
            if m and sec:
                relocs.setdefault(sec, {})[int(m.group(1), 16)] = (m.group(2), m.group(3))
        for sec, rs in relocs.items():
            for off, (typ, val) in rs.items():
                owner = self.owner(sec, off)
                if owner:
                    self.refs.append((owner, self.target(typ, val)))
        # direct calls and tail calls to functions of this object, which the
        # assembler resolved (no relocation)
        sec = None
        fn = None
        lines = run('objdump', '-dw', '--no-show-raw-insn', self.path).splitlines()
        insns = []
        for line in lines:
            if line.startswith('Disassembly of section '):
                sec = line[len('Disassembly of section '):].rstrip(':')
                continue
            m = LABEL.match(line)
            if m:
                fn = base(m.group(2))
                continue
            m = INSN.match(line)
            if m and fn:
                insns.append((sec, fn, int(m.group(1), 16), m.group(2), m.group(3)))
        for i, (sec, fn, addr, op, arg) in enumerate(insns):
            if not (op.startswith('call') or op.startswith('j')):
                continue
            m = DIRECT.match(arg.strip())
            if not m:
                continue
            end = insns[i + 1][2] if i + 1 < len(insns) and insns[i + 1][0] == sec else addr + 16
            rs = relocs.get(sec, {})
            if any(addr <= o < end for o in rs):
                continue  # a placeholder for a relocation, read above
            t = base(m.group(1))
            if t != fn:
                self.refs.append((fn, t))

    def owner(self, sec, off):
        for s, e, n in self.bysec.get(sec, ()):
            if s <= off < e:
                return n
        return None

    def target(self, typ, val):
        m = re.match(r'^(.+?)([+-]0x[0-9a-f]+)?$', val)
        name, add = m.group(1), int(m.group(2) or '0', 16)
        if name.startswith('.'):
            if typ in ('R_X86_64_PC32', 'R_X86_64_PLT32'):
                add += 4
            return (name, add)
        return base(name)


def load(build):
    objs = []
    for path in sorted(glob.glob(os.path.join(build, 'userspace', '*', '**', '*.o'),
                                 recursive=True)):
        src = os.path.relpath(path, build)[:-2] + '.c'
        if os.path.basename(src) == 'numaplaced.c':
            continue  # the program's main, not the library
        if not os.path.exists(src):
            continue  # left in the build directory by a file moved
        objs.append(Obj(path, src))
    return objs


def layer(src):
    """userspace/daemon/apply/reconcile.c -> userspace/daemon"""
    return '/'.join(src.split('/')[:2])


def graph(objs):
    """nodes: (src, name) -> kind; edges: node -> set(node)"""
    glob_defs = {}
    for o in objs:
        for n, (g, _) in o.defs.items():
            if g:
                glob_defs.setdefault(n, o)
    kinds, edges = {}, {}
    for o in objs:
        for n, (_, k) in o.defs.items():
            kinds[(o.src, n)] = k
        for frm, t in o.refs:
            if isinstance(t, tuple):
                t = o.owner(*t)
                if not t:
                    continue
                d = o
            elif t in o.defs:
                d = o
            elif t in glob_defs:
                d = glob_defs[t]
            else:
                continue  # a library's
            a, b = (o.src, frm), (d.src, t)
            if a != b:
                edges.setdefault(a, set()).add(b)
    return kinds, edges


def sccs(nodes, edges):
    """Tarjan, iterative; components of more than one node"""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for v0 in nodes:
        if v0 in index:
            continue
        work = [(v0, iter(sorted(edges.get(v0, ()))))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in nodes:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def unit_graph(edges, nodes, unit):
    g = {}
    for a in nodes:
        for b in edges.get(a, ()):
            if b in nodes and unit(a) != unit(b):
                g.setdefault(unit(a), set()).add(unit(b))
    return g


def back_edges(g):
    comps = sccs(set(g) | {b for bs in g.values() for b in bs}, g)
    where = {u: i for i, c in enumerate(comps) for u in c}
    n = sum(1 for a, bs in g.items() for b in bs
            if a in where and where.get(b) == where[a])
    return n, comps


def cmd_reach(args):
    objs = load(args.build)
    kinds, edges = graph(objs)
    roots = [k for k in kinds if k[1] == args.entry]
    if not roots:
        sys.exit(f'callgraph: {args.entry} is in no object under {args.build}')
    roots += [k for k, v in kinds.items() if v == 'O' and k[1].endswith('_ops')]
    seen, todo = set(roots), list(roots)
    while todo:
        v = todo.pop()
        for w in edges.get(v, ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    fns = {v for v in seen if kinds.get(v) == 'F'}
    files = {v[0] for v in fns}
    folders = {layer(f) for f in files}
    subfolders = {os.path.dirname(f) for f in files}
    fg = unit_graph(edges, seen, lambda v: v[0])
    dg = unit_graph(edges, seen, lambda v: layer(v[0]))
    fback, fcomps = back_edges(fg)
    dback, dcomps = back_edges(dg)
    print(f'entry {args.entry} (and the *_ops tables)')
    print(f'functions {len(fns)}')
    print(f'files {len(files)}')
    print(f'folders {len(folders)} (with their subfolders: {len(subfolders)})')
    print(f'file-to-file calls {sum(len(b) for b in fg.values())}')
    print(f'file-to-file calls back to a file left {fback} '
          f'(in {len(fcomps)} circles)')
    print(f'folder-to-folder calls {sum(len(b) for b in dg.values())}')
    print(f'folder-to-folder calls back to a folder left {dback}')
    if args.list:
        for f in sorted(files):
            print(f'  {f}')
        for c in fcomps:
            print('  circle: ' + ' '.join(c))
        for c in dcomps:
            print('  folder circle: ' + ' '.join(c))


def prefix(sym):
    """np_daemon_meta_find -> np_daemon_; cg_strerror -> None"""
    m = re.match(r'^(np_[a-z0-9]+_)', sym)
    return m.group(1) if m else None


def module_ok(comp, fedges):
    """comp: files in one circle. (ok, why)"""
    folder = {layer(f) for f in comp}
    if len(folder) != 1:
        return False, 'files of more than one folder'
    folder = folder.pop()
    common = None
    for f in comp:
        with open(f) as fh:
            text = fh.read()
        inc = set(re.findall(r'^#include "(?:[a-z_]+/)?([a-z_]+_internal\.h)"',
                             text, re.M))
        common = inc if common is None else common & inc
    common = sorted(h for h in common or ()
                    if os.path.exists(os.path.join(folder, h)))
    if not common:
        return False, 'no *_internal.h of the folder that all of them include'
    calls = sorted({(a, b, s) for a in comp for b, syms in fedges.get(a, {}).items()
                    if b in comp for s in syms})
    prefixes = {prefix(s) for _, _, s in calls}
    if len(prefixes) == 1 and None not in prefixes:
        return True, f'one module: {prefixes.pop()}* behind {common[0]}'
    return False, ('behind ' + ', '.join(common) + ' but not one prefix ('
                   + ', '.join(sorted(p or 'none' for p in prefixes)) + '):\n      '
                   + '\n      '.join(f'{a} -> {b}: {s}' for a, b, s in calls))


def cmd_circles(args):
    objs = load(args.build)
    kinds, edges = graph(objs)
    fedges = {}  # file -> file -> {symbols}
    for a, bs in edges.items():
        for b in bs:
            if a[0] != b[0]:
                fedges.setdefault(a[0], {}).setdefault(b[0], set()).add(b[1])
    g = {a: set(bs) for a, bs in fedges.items()}
    nodes = set(g) | {b for bs in g.values() for b in bs}
    fails = 0
    comps = sccs(nodes, g)
    for c in comps:
        ok, why = module_ok(set(c), fedges)
        print(('ok   ' if ok else 'FAIL ') + 'circle ' + ' '.join(c) + ': ' + why)
        fails += not ok
    print(f'circles: {len(comps)}, {fails} against the module rule')
    return 1 if fails else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('reach')
    r.add_argument('--build', default='build')
    r.add_argument('--entry', default='np_daemon_reconcile')
    r.add_argument('--list', action='store_true')
    c = sub.add_parser('circles')
    c.add_argument('--build', default='build')
    args = p.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    if args.cmd == 'reach':
        cmd_reach(args)
        return 0
    return cmd_circles(args)


if __name__ == '__main__':
    sys.exit(main())
