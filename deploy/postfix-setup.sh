#!/bin/sh
# Hand the game's mail to abalone-pbm in an existing Postfix, touching nothing else.
#
#   deploy/postfix-setup.sh [-c CONFIG_DIR] [-l LMTP] [-p POLICY] ADDRESS
#
#   ADDRESS     the game's address, the same as ABALONE_PBM_ADDRESS (abalone@pbm.example.org)
#   -c DIR      the Postfix configuration directory (default /etc/postfix)
#   -l H:P      where abalone-pbm listens for LMTP      (ABALONE_PBM_LISTEN, default 127.0.0.1:8025)
#   -p H:P      where it answers recipient checks       (ABALONE_PBM_POLICY_LISTEN, default 127.0.0.1:8026)
#
# What it does (see deploy/postfix-main.cf.example for the same by hand):
#  - writes DIR/abalone-recipients.regexp: the game address, its +board.token reply
#    addresses and (when the game has a domain of its own) every other address there;
#  - writes DIR/abalone-transport.regexp: those addresses go to the LMTP port;
#  - main.cf: puts `check_recipient_access regexp:DIR/abalone-recipients.regexp` FIRST in
#    smtpd_recipient_restrictions (the site's own list follows unchanged), adds the two
#    restriction classes it names, puts the transport map first in transport_maps, and
#    adds the game's domain to relay_domains when it is not already a local domain.
# Only the game's addresses ever match these maps; every other address of the site is
# judged exactly as before. No size limit, no restriction list of the site is replaced.
# Running it again with the same arguments changes nothing more. Postfix is reloaded
# when it is running.
set -eu

config_dir=/etc/postfix
lmtp=127.0.0.1:8025
policy=127.0.0.1:8026
usage() {
    echo "usage: $0 [-c CONFIG_DIR] [-l LMTP_HOST:PORT] [-p POLICY_HOST:PORT] ADDRESS" >&2
    exit 2
}
while getopts c:l:p:h option; do
    case $option in
        c) config_dir=$OPTARG ;;
        l) lmtp=$OPTARG ;;
        p) policy=$OPTARG ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
address=$(printf '%s' "$1" | tr 'A-Z' 'a-z')
local_part=${address%@*}
domain=${address#*@}
case $address in
    *@*@* | @* | *@ | *+*@* | *[!a-z0-9.@_-]*)
        echo "$0: $1 is not a plain address such as abalone@pbm.example.org" >&2; exit 2 ;;
    *@*) ;;
    *) echo "$0: $1 is not a plain address such as abalone@pbm.example.org" >&2; exit 2 ;;
esac
for endpoint in "$lmtp" "$policy"; do
    case $endpoint in
        *:*[!0-9]* | *: | :*) echo "$0: $endpoint is not host:port" >&2; exit 2 ;;
        *:*) ;;
        *) echo "$0: $endpoint is not host:port" >&2; exit 2 ;;
    esac
done
[ -f "$config_dir/main.cf" ] || { echo "$0: no $config_dir/main.cf" >&2; exit 1; }

pc() { postconf -c "$config_dir" "$@"; }
# A regular expression that matches the text literally.
quote() { printf '%s' "$1" | sed 's/[].[\\*^$+?(){}|/]/\\&/g'; }
# Whether the list (commas and/or blanks) in $2 holds the word $1.
holds() { printf '%s\n' "$2" | tr ', \t' '\n\n\n' | grep -qixF -- "$1"; }

domain_re=$(quote "$domain")
local_re=$(quote "$local_part")
if holds "$domain" "$(pc -xh mydestination)"; then
    domain_class=local
elif holds "$domain" "$(pc -xh virtual_alias_domains) $(pc -xh virtual_mailbox_domains)"; then
    echo "$0: $domain is a virtual domain of this Postfix; give the game a domain of its" \
         "own (e.g. pbm.$domain) or an address in a local domain (mydestination)" >&2
    exit 1
else
    domain_class=own
fi

recipients=$config_dir/abalone-recipients.regexp
transport=$config_dir/abalone-transport.regexp
{
    echo "# abalone-pbm: the game's addresses ($address), written by deploy/postfix-setup.sh."
    echo "# The game address itself: checked by the server (size), accepted while it is down."
    echo "/^${local_re}@${domain_re}\$/ abalone_address"
    echo "# Reply addresses: checked by the server; a temporary refusal while it is down."
    echo "/^${local_re}\\+[^@]*@${domain_re}\$/ abalone_reply_address"
    if [ "$domain_class" = own ]; then
        echo "# Every other address of the game's own domain does not exist."
        echo "/@${domain_re}\$/ 550 5.1.1 No such address here"
    fi
} > "$recipients.new"
{
    echo "# abalone-pbm: the game's mail goes to the server over LMTP."
    if [ "$domain_class" = own ]; then
        echo "/@${domain_re}\$/ lmtp:inet:$lmtp"
    else
        echo "/^${local_re}(\\+[^@]*)?@${domain_re}\$/ lmtp:inet:$lmtp"
    fi
} > "$transport.new"
mv "$recipients.new" "$recipients"
mv "$transport.new" "$transport"

# Prepend $2 to the list parameter $1 unless it is already in it.
prepend() {
    current=$(pc -h "$1")
    case " $current " in *"$2"*) return 0 ;; esac
    if [ -n "$current" ]; then pc -e "$1 = $2, $current"; else pc -e "$1 = $2"; fi
}
append() {
    current=$(pc -h "$1")
    if holds "$2" "$current"; then return 0; fi
    if [ -n "$current" ]; then pc -e "$1 = $current, $2"; else pc -e "$1 = $2"; fi
}

append smtpd_restriction_classes abalone_address
append smtpd_restriction_classes abalone_reply_address
pc -e "abalone_address = check_policy_service { inet:$policy, default_action=DUNNO }"
pc -e "abalone_reply_address = check_policy_service { inet:$policy, { default_action = 451 4.3.0 The game server is restarting, please retry } }"
prepend smtpd_recipient_restrictions "check_recipient_access regexp:$recipients"
prepend transport_maps "regexp:$transport"
if [ "$domain_class" = own ]; then
    append relay_domains "$domain"
    if [ -n "$(pc -h relay_recipient_maps)" ]; then
        echo "$0: note: relay_recipient_maps is set; add the line \"@$domain x\" to one of" \
             "its tables, or Postfix refuses the game's addresses as unknown" >&2
    fi
else
    delimiter=$(pc -h recipient_delimiter)
    case $delimiter in
        *+*) ;;
        *) pc -e "recipient_delimiter = ${delimiter}+"
           echo "$0: note: recipient_delimiter is now \"${delimiter}+\" so that the game's" \
                "reply addresses $local_part+... count as $local_part" >&2 ;;
    esac
    if ! id "$local_part" >/dev/null 2>&1 && ! grep -qi "^$local_part:" /etc/aliases 2>/dev/null; then
        echo "$0: note: $local_part is neither a user nor in /etc/aliases; Postfix refuses" \
             "unknown local recipients, so add \"$local_part: root\" to /etc/aliases and run" \
             "newaliases (the transport sends its mail to abalone-pbm all the same)" >&2
    fi
fi

if postfix -c "$config_dir" status >/dev/null 2>&1; then
    postfix -c "$config_dir" reload
fi
echo "$0: mail for $address (and its reply addresses) now goes to lmtp:inet:$lmtp;" \
     "recipients are checked by the policy service on $policy ($domain_class domain)"
