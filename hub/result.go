package hub

// The _meta keys under which the hub sends the caller to a server.
const (
	MetaUserID = "mcpgram/user_id"
	MetaChatID = "mcpgram/chat_id"
	// MetaConsent is true on a call the user approved on its card.
	MetaConsent = "mcpgram/consent"
)

// MetaConsentWhen is the key, in a tool definition's _meta, of the calls
// that need the user's own consent: an object from argument name to the
// values that need it, such as {"operation": ["store"]}; {} means every
// call. mcpgram asks the user before each such call, whatever autoApprove
// says, and sends it with MetaConsent once the user agreed.
const MetaConsentWhen = "mcpgram/consent_when"

// MetaPerUser is the key, in a tool definition's _meta, of a tool that
// acts for the calling user (the one in MetaUserID): true says its
// results are that user's alone, as the memory server's are. In a group,
// mcpgram keeps such results out of the other members' turns. Anything
// but false declares it too: the safe side of a server's mistake.
const MetaPerUser = "mcpgram/per_user"
