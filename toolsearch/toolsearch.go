// Package toolsearch finds the tools of a catalog that fit a request
// written in plain language, for a model that is shown only some of the
// tools and searches for the others.
//
// The ranking is BM25, the lexical ranking of search engines, over each
// tool's name, title, description, argument names and the values of their
// enums, and its server's name and description (the fields weighed as
// BM25F weighs them): deterministic, with no model and no network, and
// fast: an Index of a thousand tools answers in well under a
// millisecond. BM25 is a few dozen lines here; the stemming is the
// kljensen/snowball module's, a well-kept implementation of the Snowball
// algorithms, which no short code of ours would match. Words are cut
// at case changes and punctuation (getFileInfo and get_file_info are the
// same three words), lower-cased, stripped of common English words and
// reduced to their stems with the Snowball English stemmer, so that
// "files", "listing" and "listed" meet "file" and "list". A few everyday
// verbs also look for the word tools use for them ("remove" for
// "delete", "show" for "get"): see synonyms.go.
//
// Ties are broken by server and tool name, so the same catalog and query
// always give the same hits in the same order.
//
// Each hit names the tools of other servers that look like it (the rule
// is in lookalike.go): a server that copies another's tool's name or
// wording may rank first for that server's requests, and only the
// servers' names tell the two apart.
package toolsearch

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// BM25's parameters, at their usual values: k1 bounds how much a word
// repeated in a tool counts, b how much a long description is discounted.
const (
	k1 = 1.2
	b  = 0.75
)

// Weights of a tool's fields: a word of the name says more about what a
// tool does than a word of its description. They repeat the words, as
// BM25F does for fields. The values of an argument's enum say what a
// tool can do (a state "closed", a mode "driving"); the server's own
// description says what all its tools are about. Arguments' descriptions
// are left out: they describe the arguments, and measured, they pulled
// the wrong tools up.
const (
	weightName              = 3
	weightTitle             = 2
	weightDescription       = 1
	weightArgument          = 1
	weightValues            = 1
	weightServer            = 1
	weightServerDescription = 1
)

// A Hit is one tool found.
type Hit struct {
	Server string
	Tool   mcpgram.Tool
	// Score is the tool's BM25 score for the query: higher fits better;
	// only the order means anything.
	Score float64
	// Lookalikes are the tools of the other servers searched that look
	// like this one (see Lookalike), by server and name.
	Lookalikes []Lookalike
}

// An Index holds the running tools of one catalog, ready to search. It is
// read-only once built and safe for concurrent use.
type Index struct {
	version uint64
	docs    []doc
	// postings maps a stem to the tools that hold it.
	postings map[string][]posting
	avgLen   float64
}

type doc struct {
	server string
	tool   mcpgram.Tool
	length int // in weighted words
	// name and described are the keys lookalikes are found by (see
	// lookalike.go); alike are the tools they found.
	name, described string
	alike           []Lookalike
}

type posting struct {
	doc int
	tf  float64 // weighted count of the stem in the tool
}

// New indexes the tools of cat's running servers.
func New(cat mcpgram.Catalog) *Index {
	ix := &Index{version: cat.Version, postings: map[string][]posting{}}
	// Tools share most of their words: each is stemmed once.
	stems := map[string]string{}
	total := 0
	for _, s := range cat.Running() {
		for _, t := range s.Tools {
			counts := map[string]float64{}
			n := 0
			var described []string
			// add counts the stems of text, weighing w, and keeps them
			// in keep when it is not nil.
			add := func(text string, w int, keep *[]string) {
				for _, word := range Words(text) {
					stem, ok := stems[word]
					if !ok {
						stem = stemOf(word)
						stems[word] = stem
					}
					if stem == "" {
						continue
					}
					counts[stem] += float64(w)
					n += w
					if keep != nil {
						*keep = append(*keep, stem)
					}
				}
			}
			add(t.Name, weightName, nil)
			add(t.Title, weightTitle, nil)
			add(t.Description, weightDescription, &described)
			for _, a := range arguments(t.InputSchema) {
				add(a.name, weightArgument, nil)
				add(strings.Join(a.values, " "), weightValues, nil)
			}
			add(s.Name, weightServer, nil)
			add(s.Description, weightServerDescription, nil)
			d := len(ix.docs)
			ix.docs = append(ix.docs, doc{server: s.Name, tool: t, length: n, name: nameKey(t.Name), described: descriptionKey(described)})
			total += n
			for stem, tf := range counts {
				ix.postings[stem] = append(ix.postings[stem], posting{d, tf})
			}
		}
	}
	if len(ix.docs) > 0 {
		ix.avgLen = float64(total) / float64(len(ix.docs))
	}
	ix.lookalikes()
	return ix
}

// Version is the catalog version the index was built from.
func (ix *Index) Version() uint64 { return ix.version }

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// A Query is what to look for.
type Query struct {
	// Text is the request in plain language, or a tool's name.
	Text string
	// Server, when set, limits the search to that server's tools.
	Server string
	// Limit is the most hits to return; 0 returns DefaultLimit.
	Limit int
	// Visible, when set, says which servers may be searched (a chat may
	// have turned some off for itself); nil searches all.
	Visible func(server string) bool
}

// DefaultLimit is how many hits a search returns unless told otherwise.
const DefaultLimit = 5

// Search returns the tools that best fit q, best first: only those that
// share a word (after stemming) with the query, at most q.Limit.
func (ix *Index) Search(q Query) []Hit {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	terms := queryTerms(q.Text)
	if len(terms) == 0 || len(ix.docs) == 0 {
		return nil
	}
	scores := make([]float64, len(ix.docs))
	n := float64(len(ix.docs))
	for _, term := range terms {
		ps := ix.postings[term.stem]
		if len(ps) == 0 {
			continue
		}
		// BM25's IDF, in the form that stays positive for common words.
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			d := &ix.docs[p.doc]
			norm := k1 * (1 - b + b*float64(d.length)/ix.avgLen)
			scores[p.doc] += term.weight * idf * p.tf * (k1 + 1) / (p.tf + norm)
		}
	}
	// The best few, kept in order as they come: a catalog has many tools
	// and a search wants a handful.
	top := make([]int, 0, limit+1)
	better := func(i, j int) bool {
		if scores[i] != scores[j] {
			return scores[i] > scores[j]
		}
		di, dj := &ix.docs[i], &ix.docs[j]
		return cmp.Or(strings.Compare(di.server, dj.server), strings.Compare(di.tool.Name, dj.tool.Name)) < 0
	}
	for i, s := range scores {
		d := &ix.docs[i]
		if s <= 0 || q.Server != "" && d.server != q.Server || q.Visible != nil && !q.Visible(d.server) {
			continue
		}
		if len(top) == limit && !better(i, top[limit-1]) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, i, func(e, target int) int {
			if better(e, target) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, at, i)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	hits := make([]Hit, len(top))
	for k, i := range top {
		d := &ix.docs[i]
		hits[k] = Hit{Server: d.server, Tool: d.tool, Score: scores[i]}
		for _, o := range d.alike {
			if q.Visible == nil || q.Visible(o.Server) {
				hits[k].Lookalikes = append(hits[k].Lookalikes, o)
			}
		}
	}
	return hits
}

// A term is a stem of the query and what it weighs: the query's own
// words weigh 1, the words synonyms add less.
type term struct {
	stem   string
	weight float64
}

// queryTerms returns the stems of a query, each once, with the stems its
// words' synonyms add (see synonyms.go).
func queryTerms(text string) []term {
	var out []term
	seen := map[string]int{}
	add := func(stem string, w float64) {
		if i, ok := seen[stem]; ok {
			out[i].weight = max(out[i].weight, w)
			return
		}
		seen[stem] = len(out)
		out = append(out, term{stem, w})
	}
	for _, stem := range Stems(text) {
		w := 1.0
		if asking[stem] {
			w = askingWeight
		}
		add(stem, w)
	}
	for _, t := range slices.Clone(out) {
		for _, syn := range synonyms[t.stem] {
			add(syn, synonymWeight)
		}
	}
	return out
}

type argument struct {
	name   string
	values []string
}

// arguments returns the top-level properties of a tool's input schema,
// by name.
func arguments(schema json.RawMessage) []argument {
	var s struct {
		Properties map[string]struct {
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]argument, 0, len(s.Properties))
	for k, p := range s.Properties {
		a := argument{name: k}
		for _, v := range p.Enum {
			if s, ok := v.(string); ok {
				a.values = append(a.values, s)
			}
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b argument) int { return strings.Compare(a.name, b.name) })
	return out
}
