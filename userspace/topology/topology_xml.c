// SPDX-License-Identifier: Apache-2.0
/*
 * Untrusted hwloc XML, checked before libhwloc parses it: a crude scan of
 * the tags and attributes that errs on refusing (see np_hwloc_xml_check).
 */
#include "topology_internal.h"
#include "numaplace/topology.h"
#include "numaplace/error.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static bool xml_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
	       ch == '.' || ch == ':';
}

static bool xml_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* A piece of the buffer. */
struct xml_str {
	const char *s;
	size_t n;
};

/* s, without a namespace prefix, is want. */
static bool xml_is(struct xml_str s, const char *want)
{
	const char *colon = memrchr(s.s, ':', s.n);

	if (colon) {
		s.n -= (size_t)(colon + 1 - s.s);
		s.s = colon + 1;
	}
	return s.n == strlen(want) && !memcmp(s.s, want, s.n);
}

static bool xml_ends_with(struct xml_str s, const char *suffix)
{
	size_t k = strlen(suffix);
	return s.n >= k && !memcmp(s.s + s.n - k, suffix, k);
}

/* hwloc's reading of a type name (hwloc_type_sscanf): its first min
 * characters are those of name, in any case ("PU", "pu", "NUMANode",
 * "Node"). */
static bool xml_type_is(struct xml_str t, const char *name, size_t min)
{
	return t.n >= min && !strncasecmp(t.s, name, min);
}

/* A type name hwloc writes (hwloc_obj_type_string), or one of the
 * version 1 names its importer still reads; in any case. Anything else
 * (an unknown type, none) crashed libhwloc 2.9 while sorting children
 * (a NULL cpuset: the fifth run of the hwloc harness). */
static bool object_type_known(struct xml_str t)
{
	static const char *const types[] = {
	    "Machine",	"Package",  "Die",	 "Core",     "PU",
	    "L1Cache",	"L2Cache",  "L3Cache",	 "L4Cache",  "L5Cache",
	    "L1iCache", "L2iCache", "L3iCache", "Group",    "NUMANode",
	    "MemCache", "Bridge",   "PCIDev",	 "OSDev",    "Misc",
	    "System",	"Socket",   "Node",	 "Cache",    "HostBridge",
	    "PCIBridge"};

	for (size_t k = 0; t.s && k < sizeof(types) / sizeof(types[0]); k++)
		if (t.n == strlen(types[k]) && !strncasecmp(t.s, types[k], t.n))
			return true;
	return false;
}

static int object_type_check(struct xml_str type, const char *what, int line,
			     char *err, size_t errlen)
{
	if (object_type_known(type))
		return 0;
	NP_ERR("%s: line %d: <object> type \"%.*s\" is not one hwloc writes "
	       "(Machine, Package, Die, Core, PU, L1Cache.., Group, NUMANode, "
	       "MemCache, Bridge, PCIDev, OSDev, Misc)",
	       what, line, (int)(type.n > 32 ? 32 : type.n),
	       type.s ? type.s : "");
	return -EINVAL;
}

/* Line of buf[off], for messages. */
static int xml_line(const char *buf, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off; i++)
		line += buf[i] == '\n';
	return line;
}

/* The next attribute of a start tag at buf[*p]: 1 with *name and *val,
 * 0 at the end of the tag, -1 when it cannot be read. */
static int xml_attr(const char *buf, size_t len, size_t *p,
		    struct xml_str *name, struct xml_str *val)
{
	size_t i = *p;
	char q;

	while (i < len && xml_space(buf[i]))
		i++;
	if (i < len && buf[i] == '>')
		return 0;
	/* "/>" ends an empty element; a '/' before anything else is not
	 * XML (libhwloc's reading of it differs) */
	if (i < len && buf[i] == '/')
		return i + 1 < len && buf[i + 1] == '>' ? 0 : -1;
	name->s = buf + i;
	while (i < len && xml_name_char(buf[i]))
		i++;
	name->n = (size_t)(buf + i - name->s);
	/* name="value" with nothing around '=', as hwloc writes it: its
	 * own parser reads 'name= "value"' otherwise than XML does (a PU
	 * read without its complete cpuset crashed libhwloc: the seventh run
	 * of the hwloc harness) */
	if (!name->n || i >= len || buf[i++] != '=')
		return -1;
	if (i >= len || (buf[i] != '"' && buf[i] != '\''))
		return -1;
	q = buf[i++];
	val->s = buf + i;
	while (i < len && buf[i] != q)
		i++;
	if (i >= len)
		return -1;
	val->n = (size_t)(buf + i - val->s);
	*p = i + 1;
	return 1;
}

static bool xml_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
	       (ch >= 'A' && ch <= 'F');
}

/* A bitmap as hwloc writes one: "0xf...f" (all set from there on) or a
 * first word, then ","-separated words, an empty one meaning zero
 * ("0x00000003", "0x00000001,,0x00000002", "0xf...f,0x00000003"). A value
 * that starts with "," kills libhwloc 2.9 (an assertion in
 * hwloc_bitmap_sscanf). */
static bool xml_bitmap_ok(struct xml_str v)
{
	size_t i = 0;
	bool first = true;

	if (v.n >= 7 && !memcmp(v.s, "0xf...f", 7)) {
		if (v.n == 7)
			return true;
		if (v.s[7] != ',')
			return false;
		i = 8;
		first = false;
	}
	for (;;) {
		size_t start = i, digits;

		if (i + 1 < v.n && v.s[i] == '0' &&
		    (v.s[i + 1] == 'x' || v.s[i + 1] == 'X'))
			i += 2;
		digits = i;
		while (i < v.n && xml_hex(v.s[i]))
			i++;
		if (i == digits && (first || i != start))
			return false; /* an empty first word, or "0x" alone */
		first = false;
		if (i == v.n)
			return true;
		if (v.s[i++] != ',')
			return false;
	}
}

/* An os_index below max, in decimal as hwloc writes it. */
static bool xml_index_ok(struct xml_str v, unsigned max)
{
	unsigned long long x = 0;

	if (!v.n || v.n > 10)
		return false;
	for (size_t i = 0; i < v.n; i++) {
		if (v.s[i] < '0' || v.s[i] > '9')
			return false;
		x = x * 10 + (unsigned)(v.s[i] - '0');
	}
	return x < max;
}

/*
 * The shape of hwloc's exports, which libhwloc trusts too: no attribute
 * twice in one tag (a tag with two os_index and a NUMANode as the
 * outermost object crashed it: found by a long fuzz run), a distance
 * matrix of at most NP_MAX_CPUS objects, <object>
 * elements closed in order, and the outermost one a Machine (System in
 * hwloc 1 files).
 */
/* A CPU object that must have a PU below it (Machine, Package, Die,
 * Core, caches, Group; their hwloc 1 names too). */
static bool holds_pus(struct xml_str t)
{
	return xml_type_is(t, "machine", 7) || xml_type_is(t, "system", 6) ||
	       xml_type_is(t, "package", 7) || xml_type_is(t, "socket", 6) ||
	       xml_type_is(t, "die", 3) || xml_type_is(t, "core", 4) ||
	       xml_type_is(t, "group", 5) ||
	       (xml_ends_with(t, "Cache") && !xml_type_is(t, "memcache", 8));
}

#define XML_MAX_DEPTH 64

static int xml_shape_check(const char *buf, size_t len, const char *what,
			   char *err, size_t errlen)
{
	/* per open <object>: needs a PU below it, has one, its line */
	struct { bool needs, has; int line; } st[XML_MAX_DEPTH];
	int depth = 0;
	bool first = true;

	for (size_t i = 0; i < len; i++) {
		struct xml_str tag, name, val, type = {0}, names[64];
		size_t p = i + 1;
		bool closing;
		int n = 0, r;

		if (buf[i] != '<')
			continue;
		closing = p < len && buf[p] == '/';
		p += closing;
		tag.s = buf + p;
		while (p < len && xml_name_char(buf[p]))
			p++;
		tag.n = (size_t)(buf + p - tag.s);
		if (!tag.n)
			continue;
		if (closing) {
			if (!xml_is(tag, "object"))
				continue;
			if (--depth < 0)
				goto unbalanced;
			if (st[depth].needs && !st[depth].has)
				goto no_pu;
			if (depth)
				st[depth - 1].has |= st[depth].has;
			continue;
		}
		while ((r = xml_attr(buf, len, &p, &name, &val)) > 0) {
			for (int k = 0; k < n; k++)
				if (names[k].n == name.n &&
				    !memcmp(names[k].s, name.s, name.n)) {
					NP_ERR("%s: line %d: attribute \"%.*s\" "
					       "twice in one tag",
					       what, xml_line(buf, i),
					       (int)(name.n > 40 ? 40 : name.n),
					       name.s);
					return -EINVAL;
				}
			if (n < 64)
				names[n++] = name;
			if (xml_is(name, "type"))
				type = val;
			/* hwloc allocates nbobjs^2 distances before it reads
			 * them (a 68-digit count: found by a long fuzz run) */
			if (xml_is(name, "nbobjs") &&
			    !xml_index_ok(val, NP_MAX_CPUS + 1)) {
				NP_ERR("%s: line %d: nbobjs=\"%.*s\": expected a "
				       "number up to %d",
				       what, xml_line(buf, i),
				       (int)(val.n > 20 ? 20 : val.n), val.s,
				       NP_MAX_CPUS);
				return -EINVAL;
			}
		}
		if (r < 0 || !xml_is(tag, "object"))
			continue; /* an unreadable tag is np_hwloc_xml_check's */
		if (first && !xml_type_is(type, "machine", 7) &&
		    !xml_type_is(type, "system", 6)) {
			NP_ERR("%s: line %d: the outermost object is not the "
			       "Machine (hwloc's exports start with it)",
			       what, xml_line(buf, i));
			return -EINVAL;
		}
		first = false;
		while (p < len && xml_space(buf[p]))
			p++;
		if (depth >= XML_MAX_DEPTH) {
			NP_ERR("%s: line %d: <object> elements nested deeper "
			       "than %d",
			       what, xml_line(buf, i), XML_MAX_DEPTH);
			return -EINVAL;
		}
		st[depth].needs = holds_pus(type);
		st[depth].has = xml_type_is(type, "pu", 2);
		st[depth].line = xml_line(buf, i);
		if (p < len && buf[p] == '>') { /* children follow */
			depth++;
			continue;
		}
		if (st[depth].needs) /* <object ... />: no PU below */
			goto no_pu;
		if (depth)
			st[depth - 1].has |= st[depth].has;
	}
	if (!depth)
		return 0;
unbalanced:
	NP_ERR("%s: <object> elements not closed in order (%s)", what,
	       depth < 0 ? "a </object> without its <object>"
			 : "an <object> not closed");
	return -EINVAL;
no_pu:
	/* libhwloc 2.9 crashed on a Core without PUs (the sixth run of the
	 * hwloc harness: a NULL bitmap in hwloc_bitmap_or) */
	NP_ERR("%s: line %d: a CPU object (Machine, Package, Core, cache, "
	       "Group) with no PU below it (hwloc's exports end every CPU "
	       "branch in PUs)",
	       what, st[depth].line);
	return -EINVAL;
}

/*
 * libhwloc (2.9) trusts what an XML file says, and an hwloc XML export is
 * outside input. Three shapes of file kill the process inside libhwloc
 * (kept in tests/fuzz/regress/hwloc): a CPU or memory object without its
 * complete_cpuset or complete_nodeset (a minimal hand-written file, a
 * Machine with PUs and no NUMA node, say: a NULL bitmap dereferenced
 * while it loads), and a bitmap that starts with "," (an assertion in
 * hwloc_bitmap_sscanf). A PU without an os_index, or with a large one,
 * takes it seconds and a GiB (a bitmap up to that bit) before numaplace
 * refuses the CPU number. So before hwloc sees the text, and as hwloc's
 * own exports (lstopo --of xml) always are:
 *   - every <object> but the I/O and Misc ones (Bridge, PCIDev, OSDev,
 *     Misc: they have none) carries cpuset, complete_cpuset, nodeset and
 *     complete_nodeset, and there is a NUMANode object;
 *   - a PU has an os_index below NP_MAX_CPUS, a NUMANode one below
 *     NP_MAX_NUMA;
 *   - every attribute named *set, in any element, is a bitmap as hwloc
 *     writes them (xml_bitmap_ok);
 *   - an <object> has only the attributes libhwloc 2 reads: it says
 *     "ignoring unknown object attribute" about others, but one named
 *     like a set ("cpuset2") beside the real ones left an object without
 *     its cpuset and crashed it, as did ":complete_nodeset" (found by
 *     the hour-long fuzz runs).
 * The scan is cruder than an XML parser and errs on the side of refusing:
 * every tag counts, in comments too, and one whose attributes it cannot
 * read is refused.
 */
/* The attributes of <object> libhwloc 2 reads (topology-xml.c). */
static bool object_attr_known(struct xml_str name)
{
	static const char *const known[] = {
		"type", "subtype", "os_index", "gp_index", "name", "cpuset",
		"complete_cpuset", "online_cpuset", "allowed_cpuset", "nodeset",
		"complete_nodeset", "allowed_nodeset", "local_memory",
		"cache_size", "cache_linesize", "cache_associativity",
		"cache_type", "depth", "kind", "subkind", "dont_merge",
		"bridge_type", "bridge_pci", "pci_busid", "pci_type",
		"pci_link_speed", "osdev_type", "os_level"};

	/* exactly: hwloc reads no namespace prefix (":complete_nodeset"
	 * is not complete_nodeset to it, and the object then had none) */
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (name.n == strlen(known[k]) &&
		    !memcmp(name.s, known[k], name.n))
			return true;
	return false;
}

int np_hwloc_xml_check(const char *buf, size_t len, const char *what,
		       char *err, size_t errlen)
{
	static const char *const sets[] = {"cpuset", "complete_cpuset",
					   "nodeset", "complete_nodeset"};
	static const char *const no_sets[] = {"Bridge", "HostBridge",
					      "PCIBridge", "PCIDev", "OSDev",
					      "Misc"};
	const char *nul = memchr(buf, '\0', len);
	int nnuma = 0;

	if (nul) {
		NP_ERR("%s: not an XML text file (a NUL byte at offset %zu)",
		       what, (size_t)(nul - buf));
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		struct xml_str tag = {buf + i + 1, 0}, name, val, type = {0},
			       index = {0};
		size_t p = i + 1;
		unsigned have = 0;
		bool object, exempt = false, pu, numa;
		int r;

		if (buf[i] != '<')
			continue;
		while (p < len && xml_name_char(buf[p]))
			p++;
		tag.n = p - i - 1;
		if (!tag.n) /* </end>, <?xml ?>, <!-- -->, <!DOCTYPE> */
			continue;
		object = xml_is(tag, "object");
		while ((r = xml_attr(buf, len, &p, &name, &val)) > 0) {
			if (object && !object_attr_known(name)) {
				NP_ERR("%s: line %d: <object> attribute "
				       "\"%.*s\" is not one hwloc writes",
				       what, xml_line(buf, i),
				       (int)(name.n > 40 ? 40 : name.n), name.s);
				return -EINVAL;
			}
			if (xml_ends_with(name, "set") && !xml_bitmap_ok(val)) {
				NP_ERR("%s: line %d: %.*s=\"%.*s\" is not a "
				       "bitmap as hwloc writes them (hex words "
				       "separated by commas, e.g. "
				       "\"0x0000000f\")",
				       what, xml_line(buf, i), (int)name.n,
				       name.s, (int)(val.n > 40 ? 40 : val.n),
				       val.s);
				return -EINVAL;
			}
			for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]);
			     k++)
				if (xml_is(name, sets[k]))
					have |= 1u << k;
			if (xml_is(name, "type"))
				type = val;
			if (xml_is(name, "os_index"))
				index = val;
		}
		if (r < 0) {
			NP_ERR("%s: line %d: a <%.*s> tag whose attributes "
			       "cannot be read",
			       what, xml_line(buf, i), (int)(tag.n > 40 ? 40 : tag.n),
			       tag.s);
			return -EINVAL;
		}
		if (!object)
			continue;
		if ((r = object_type_check(type, what, xml_line(buf, i), err,
					   errlen)))
			return r;
		for (size_t k = 0; k < sizeof(no_sets) / sizeof(no_sets[0]);
		     k++)
			exempt |= type.n == strlen(no_sets[k]) &&
				  !strncasecmp(type.s, no_sets[k], type.n);
		if (exempt)
			continue;
		for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
			if (have & (1u << k))
				continue;
			NP_ERR("%s: line %d: %s%.*s object without %s (hwloc's "
			       "exports give every CPU and memory object "
			       "cpuset, complete_cpuset, nodeset and "
			       "complete_nodeset; libhwloc crashes on a file "
			       "without them)",
			       what, xml_line(buf, i),
			       type.s ? "" : "an untyped",
			       (int)(type.n > 32 ? 32 : type.n),
			       type.s ? type.s : "", sets[k]);
			return -EINVAL;
		}
		/* hwloc_type_sscanf: "pu", "numanode" and "node" need their
		 * first 2 letters */
		pu = xml_type_is(type, "pu", 2);
		numa = xml_type_is(type, "numanode", 2) ||
		       xml_type_is(type, "node", 2);
		nnuma += numa;
		if ((pu && !xml_index_ok(index, NP_MAX_CPUS)) ||
		    (numa && !xml_index_ok(index, NP_MAX_NUMA))) {
			NP_ERR("%s: line %d: %s os_index \"%.*s\": expected a "
			       "number below %d",
			       what, xml_line(buf, i), pu ? "PU" : "NUMANode",
			       (int)(index.n > 20 ? 20 : index.n),
			       index.s ? index.s : "",
			       pu ? NP_MAX_CPUS : NP_MAX_NUMA);
			return -EINVAL;
		}
	}
	if (nnuma && xml_shape_check(buf, len, what, err, errlen))
		return -EINVAL;
	if (!nnuma) {
		/* hwloc 2 refuses it too, with errno from elsewhere */
		NP_ERR("%s: no NUMANode object (hwloc needs at least one NUMA "
		       "node)",
		       what);
		return -EINVAL;
	}
	return 0;
}

