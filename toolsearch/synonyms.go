package toolsearch

import "github.com/kljensen/snowball/english"

// People ask in everyday words; tools are named and described in the
// words of their trade. Each word below also looks for the words that
// tools use for the same thing, at synonymWeight. The table is general
// (verbs of files, records and messages, a few everyday nouns), not
// fitted to any catalog.
var synonymWords = map[string][]string{
	"save":      {"write", "store"},
	"store":     {"write", "save"},
	"put":       {"write", "upload"},
	"folder":    {"directory"},
	"folders":   {"directory"},
	"find":      {"search"},
	"look":      {"search"},
	"lookup":    {"search"},
	"locate":    {"search"},
	"remove":    {"delete"},
	"erase":     {"delete"},
	"forget":    {"delete"},
	"drop":      {"delete"},
	"discard":   {"delete"},
	"show":      {"get", "list", "read"},
	"see":       {"get", "list", "read"},
	"view":      {"get", "read"},
	"display":   {"get", "list"},
	"retrieve":  {"get"},
	"fetch":     {"get"},
	"make":      {"create"},
	"new":       {"create"},
	"add":       {"create"},
	"start":     {"create", "run"},
	"change":    {"update", "edit"},
	"edit":      {"update"},
	"modify":    {"update", "edit"},
	"rename":    {"move"},
	"big":       {"size"},
	"large":     {"size"},
	"small":     {"size"},
	"know":      {"knowledge", "memory"},
	"remember":  {"memory", "knowledge", "observation"},
	"recall":    {"memory", "knowledge"},
	"high":      {"elevation"},
	"altitude":  {"elevation"},
	"height":    {"elevation"},
	"train":     {"transit"},
	"bus":       {"transit"},
	"walk":      {"walking"},
	"near":      {"local", "nearby"},
	"nearby":    {"local"},
	"around":    {"local", "nearby"},
	"link":      {"url"},
	"website":   {"url", "web"},
	"site":      {"url", "web"},
	"http":      {"url", "web"},
	"https":     {"url", "web"},
	"internet":  {"web"},
	"money":     {"balance", "payment"},
	"funds":     {"balance"},
	"paid":      {"payment"},
	"pay":       {"payment"},
	"crash":     {"error", "issue"},
	"exception": {"error"},
	"bug":       {"issue", "error"},
	"ticket":    {"issue"},
	"task":      {"issue"},
	"sprint":    {"cycle"},
	"wiki":      {"page"},
	"picture":   {"image", "screenshot"},
	"photo":     {"image"},
	"tell":      {"message", "send"},
	"say":       {"message", "send"},
	"latest":    {"recent", "last"},
	"newest":    {"latest", "recent"},
	"last":      {"latest", "recent"},
	"recent":    {"latest"},
	"row":       {"query", "select"},
	"rows":      {"query", "select"},
}

// askingWords are words of asking rather than of what is asked for: they
// weigh askingWeight, so that "find" in a request does not pull up every
// tool named find_ more than the words that say what to find.
var askingWords = []string{"find", "get", "show", "give", "tell", "want", "need", "please", "let", "help", "can", "could", "would", "like", "make"}

// Weights of the words a query adds beside its own (1).
const (
	synonymWeight = 0.5
	askingWeight  = 0.5
)

// synonyms and asking are the tables above by stem.
var synonyms, asking = func() (map[string][]string, map[string]bool) {
	syn := map[string][]string{}
	for w, to := range synonymWords {
		k := english.Stem(w, false)
		for _, t := range to {
			syn[k] = append(syn[k], english.Stem(t, false))
		}
	}
	ask := map[string]bool{}
	for _, w := range askingWords {
		ask[english.Stem(w, false)] = true
	}
	return syn, ask
}()
