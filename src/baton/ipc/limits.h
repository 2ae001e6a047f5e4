// The bounds on what one client of batond may cost it (doc/protocol.md,
// "Limits"). Checked where the bytes arrive or leave: the request line by
// the LineChannel that reads it, the unread replies by the one that writes
// them. Limits on single fields (a command, a brief, an environment) belong
// beside these, checked by the request codec.
#ifndef BATON_IPC_LIMITS_H_
#define BATON_IPC_LIMITS_H_

#include <cstddef>

namespace baton {

// The longest request line batond reads from a client, without its '\n'.
// A longer one gets an `invalid_argument` reply (id null) and the
// connection is closed: batond never holds more than this of a request.
inline constexpr size_t kMaxRequestLine = size_t{8} << 20;  // 8 MiB

// Request bytes batond holds for all its clients together, lines still
// being received included. When a read takes the total past this, the
// client holding the longest unfinished line gets an error and is
// disconnected (and logged), so many clients each under kMaxRequestLine
// cannot make batond grow without bound; its memory is given back.
inline constexpr size_t kMaxHeldRequestBytes = size_t{64} << 20;  // 64 MiB

// Replies a client may leave unread. A client that has more than this
// waiting in batond when another reply is due is disconnected (and
// logged): one slow or stuck client cannot make batond grow. A single
// reply larger than this still goes to a client that reads it.
inline constexpr size_t kMaxUnreadReplies = size_t{16} << 20;  // 16 MiB

// The longest line on batond's own links, where the peer is baton itself
// (the supervisor protocol; batond's replies as its clients read them).
inline constexpr size_t kMaxInternalLine = size_t{64} << 20;  // 64 MiB

}  // namespace baton

#endif  // BATON_IPC_LIMITS_H_
