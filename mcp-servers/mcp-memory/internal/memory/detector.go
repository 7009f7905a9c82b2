package memory

import (
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// personalWords are words and phrases that mark text as being about a
// person: their preferences, identity, contacts, family, health or money.
// The list errs on the side of asking: a false alarm costs one question to
// the user, a miss stores someone's private life without their consent.
var personalWords = []string{
	// preferences
	`prefer`, `prefers`, `preferred`, `preferring`, `preference`, `preferences`,
	`like`, `likes`, `liked`, `dislike`, `dislikes`, `disliked`,
	`love`, `loves`, `loved`, `hate`, `hates`, `hated`,
	`enjoy`, `enjoys`, `enjoyed`, `favourite`, `favourites`, `favorite`, `favorites`,
	`fan of`, `can't stand`, `cannot stand`,
	// the first person
	`my`, `mine`, `myself`, `me`,
	`i am`, `i'm`, `i've`, `i'd`, `i'll`,
	`i (?:was|have|had|live|lived|work|worked|want|need|use|own|drive|eat|drink|wear|speak|study|play|feel|think|believe|go|don't|do not|can't|cannot|usually|always|never)`,
	`call me`,
	// identity and contacts
	`name is`, `birthday`, `birthdays`, `birth date`, `birthdate`, `date of birth`, `years old`,
	`address`, `phone`, `telephone`, `mobile number`, `cell number`,
	`email`, `e-mail`, `email address`,
	`live in`, `lives in`, `living in`, `lived in`, `live at`, `lives at`,
	`work at`, `works at`, `work for`, `works for`, `employer`, `salary`, `income`,
	`password`, `passcode`, `passport`, `social security`, `ssn`, `credit card`, `bank account`, `iban`,
	// family and relationships
	`wife`, `husband`, `spouse`, `girlfriend`, `boyfriend`, `fiance`, `fiancé`, `fiancee`, `fiancée`,
	`mom`, `mum`, `dad`, `mother`, `father`, `son`, `daughter`, `sister`, `brother`, `kids`,
	// health and beliefs
	`allergic`, `allergy`, `allergies`, `intolerant`, `intolerance`, `diagnosed`, `medication`,
	`pregnant`, `diabetic`, `vegan`, `vegetarian`, `religion`, `religious`,
	// facts told about the user in the third person
	`the user`, `user's`, `resides`, `reside`, `residence`, `born`, `birth`, `home address`, `lives`,
	// German
	`ich`, `mein`, `meine`, `meinen`, `meinem`, `meiner`, `mich`, `mir`, `wohne`, `wohnt`, `heiße`, `heisse`, `heißt`, `heisst`,
	`geboren`, `geburtstag`, `frau`, `mann`, `ehefrau`, `ehemann`, `freundin`, `tochter`, `sohn`, `mutter`, `vater`,
	`schwester`, `bruder`, `adresse`, `telefon`, `allergisch`, `mag`, `liebe`, `hasse`, `bevorzuge`, `lieblings\w*`,
	// French
	`je`, `j'ai`, `j'habite`, `mon`, `mes`, `moi`, `habite`, `femme`, `mari`, `née?`, `adresse`, `aime`, `préfère`, `m'appelle`,
	// Spanish
	`yo`, `mis`, `vivo`, `esposa`, `esposo`, `me llamo`, `nací`, `dirección`, `prefiero`, `cumpleaños`,
}

var (
	// Go's \b is ASCII-only, which suits this English list; the apostrophe
	// is not a word character, so "i'm" still needs its own boundary rules.
	personalWordsRE = regexp.MustCompile(`(?i)\b(?:` + joinWords(personalWords) + `)\b`)
	emailRE         = regexp.MustCompile(`(?i)[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}`)
	// Phone and card numbers in the shapes people write them, chosen so that
	// dates (2026-11-21), times, versions and IP addresses do not match.
	phoneREs = []*regexp.Regexp{
		regexp.MustCompile(`\+\d{1,3}(?:[\s.-]?\(?\d{1,5}\)?){2,5}`),           // +44 20 7946 0958
		regexp.MustCompile(`(?:\(\d{3}\)\s?|\b\d{3}[\s.-])\d{3}[\s.-]\d{4}\b`), // (555) 123-4567, 555.123.4567
		regexp.MustCompile(`\b(?:\d{4}[\s-]){3}\d{4}\b`),                       // 4111 1111 1111 1111
	}
	// A bare run of 10 to 19 digits: a phone or card number unless it is
	// part of a decimal number.
	digitRunRE = regexp.MustCompile(`\d{10,19}`)
	// Street addresses as English and German write them: "12 Baker Street",
	// "Hauptstraße 5".
	addressREs = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b\d{1,5}[a-z]?\s+(?:\pL+\s+){0,3}(?:street|st|road|rd|avenue|ave|lane|ln|boulevard|blvd|drive|dr|way|court|ct|place|pl|square|sq|terrace|close|crescent)\b`),
		regexp.MustCompile(`(?i)\pL*(?:straße|strasse|str\.|weg|gasse|allee|platz)\s*\d{1,4}\b`),
	}
)

func joinWords(words []string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		// Phrases match across any run of spaces.
		parts[i] = strings.ReplaceAll(w, " ", `\s+`)
	}
	return strings.Join(parts, "|")
}

// DetectPersonal reports whether text looks like personal information or a
// preference, and what gave it away. Matching is case-insensitive and on
// whole words, so "Myanmar" and "unlikely" are fine while "My" and "likes"
// are not; e-mail addresses, phone-like numbers and street addresses count
// too. The words are English, German, French and Spanish: text in other
// languages passes unseen, which is why a host that can ask the user
// (mcpgram) does not rely on this at all, and only the single user of
// another host is guarded by it.
func DetectPersonal(text string) (match string, found bool) {
	text = fold(text)
	if m := emailRE.FindString(text); m != "" {
		return m, true
	}
	for _, re := range phoneREs {
		if m := re.FindString(text); m != "" && countDigits(m) >= 7 {
			return m, true
		}
	}
	for _, loc := range digitRunRE.FindAllStringIndex(text, -1) {
		if !partOfNumber(text, loc[0], loc[1]) {
			return text[loc[0]:loc[1]], true
		}
	}
	for _, re := range addressREs {
		if m := re.FindString(text); m != "" {
			return m, true
		}
	}
	if m := personalWordsRE.FindString(text); m != "" {
		return m, true
	}
	return "", false
}

// fold undoes the disguises that would let a word slip past the lists:
// compatibility forms (full-width letters, ligatures) become plain ones,
// invisible format characters (zero-width spaces and joiners, soft
// hyphens) go, and typographic apostrophes become plain ones, as phones
// and models write them.
func fold(text string) string {
	text = norm.NFKC.String(text)
	text = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, text)
	return strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u02bc", "'").Replace(text)
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// partOfNumber reports whether the digits at text[i:j] continue into more
// digits or a decimal point, as in 3.14159265358979 or 12345678901234567890.
func partOfNumber(text string, i, j int) bool {
	isDigit := func(k int) bool { return k >= 0 && k < len(text) && text[k] >= '0' && text[k] <= '9' }
	if isDigit(i-1) || isDigit(j) {
		return true
	}
	if i >= 2 && (text[i-1] == '.' || text[i-1] == ',') && isDigit(i-2) {
		return true
	}
	return j+1 < len(text) && (text[j] == '.' || text[j] == ',') && isDigit(j+1)
}
