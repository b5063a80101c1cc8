/**
 * Debian's postfix (SMTP) and dovecot (IMAP) on loopback, each started by the test with its own
 * configuration in a temp dir: nothing depends on the machine's own mail set-up. One domain,
 * `example.test`; its users and mailboxes are made here (postfix's virtual delivery into Maildirs,
 * dovecot reading the same Maildirs with a passwd-file). `recipient_delimiter = +` puts
 * `bridge+TOKEN@example.test` in bridge's mailbox, as plus-addressing does at a real provider.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MAIL_DOMAIN = "example.test";
const POSTFIX_MASTER = "/usr/lib/postfix/sbin/master";
const DOVECOT = "/usr/sbin/dovecot";

/** Whether both servers are installed (.ci/run installs them) and this process may start them (root). */
export const HAS_MAIL_SERVERS = existsSync(POSTFIX_MASTER) && existsSync(DOVECOT) && process.getuid?.() === 0;

/** The uid and gid mail is stored as (postfix's virtual agent refuses uid 0). */
const MAIL_UID = 65534;
const MAIL_GID = 65534;

export interface MailUser {
	address: string;
	password: string;
}

export interface MailServers {
	smtpPort: number;
	imapPort: number;
	/** Makes a user with an empty mailbox; postfix learns of it at once. */
	addUser(local: string): MailUser;
	/** postfix's log, for diagnostics. */
	log(): string;
	/** Stops both servers (SIGTERM, then SIGKILL) and removes the temp dir. */
	stop(): Promise<void>;
	/** Stops only the SMTP server: the bridge's mail then cannot be sent. */
	stopSmtp(): Promise<void>;
}

async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}

async function waitForPort(port: number, child: ChildProcess, what: string, diagnostics: () => string): Promise<void> {
	const until = Date.now() + 20_000;
	while (Date.now() < until) {
		if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}): ${diagnostics()}`);
		const open = await new Promise<boolean>((resolve) => {
			const socket = connect(port, "127.0.0.1");
			socket.once("connect", () => (socket.destroy(), resolve(true)));
			socket.once("error", () => resolve(false));
		});
		if (open) return;
		await new Promise((r) => setTimeout(r, 50));
	}
	throw new Error(`${what} did not listen on ${port}: ${diagnostics()}`);
}

const MASTER_CF = (smtpPort: number) => `127.0.0.1:${smtpPort} inet n - n - - smtpd
pickup unix n - n 60 1 pickup
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
flush unix n - n 1000? 0 flush
proxymap unix - - n - - proxymap
smtp unix - - n - - smtp
relay unix - - n - - smtp
showq unix n - n - - showq
error unix - - n - - error
retry unix - - n - - error
discard unix - - n - - discard
local unix - n n - - local
virtual unix - n n - - virtual
anvil unix - - n - 1 anvil
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
`;

const MAIN_CF = (dir: string) => `compatibility_level = 3.6
queue_directory = ${dir}/queue
data_directory = ${dir}/data
command_directory = /usr/sbin
daemon_directory = /usr/lib/postfix/sbin
meta_directory = /etc/postfix
mail_owner = postfix
setgid_group = postdrop
myhostname = mail.${MAIL_DOMAIN}
mydomain = ${MAIL_DOMAIN}
myorigin = ${MAIL_DOMAIN}
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
virtual_mailbox_domains = ${MAIL_DOMAIN}
virtual_mailbox_base = ${dir}/mail
virtual_mailbox_maps = texthash:${dir}/mailboxes
virtual_uid_maps = static:${MAIL_UID}
virtual_gid_maps = static:${MAIL_GID}
virtual_mailbox_limit = 0
message_size_limit = 20480000
recipient_delimiter = +
maillog_file = ${dir}/postfix.log
maillog_file_prefixes = ${dir}
smtputf8_enable = no
biff = no
append_dot_mydomain = no
alias_maps =
alias_database =
local_recipient_maps =
smtpd_banner = $myhostname ESMTP
in_flow_delay = 0
smtpd_peername_lookup = no
smtp_dns_support_level = disabled
queue_run_delay = 1s
minimal_backoff_time = 1s
`;

const DOVECOT_CONF = (dir: string, imapPort: number) => `protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/dovecot-run
state_dir = ${dir}/dovecot-state
log_path = ${dir}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = ${MAIL_UID}
default_internal_user = dovecot
default_login_user = dovenull
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = passwd-file
  args = username_format=%u ${dir}/users
  default_fields = uid=${MAIL_UID} gid=${MAIL_GID} home=${dir}/mail/%d/%n mail=maildir:${dir}/mail/%d/%n
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${imapPort}
  }
  inet_listener imaps {
    port = 0
  }
}
service stats {
  unix_listener stats-reader {
    mode = 0600
  }
  unix_listener stats-writer {
    mode = 0600
  }
}
`;

const QUEUE_DIRS = ["active", "bounce", "corrupt", "defer", "deferred", "flush", "hold", "incoming", "pid", "private", "saved", "trace"];

/** Starts postfix and dovecot on free loopback ports, in a temp dir of their own. */
export async function startMailServers(): Promise<MailServers> {
	const dir = mkdtempSync(join(tmpdir(), "cb-mail-"));
	chmodSync(dir, 0o755);
	const [smtpPort, imapPort] = [await freePort(), await freePort()];
	const postfixUid = Number(/^postfix:[^:]*:(\d+):/m.exec(readFileSync("/etc/passwd", "utf8"))?.[1]);
	const postdropGid = Number(/^postdrop:[^:]*:(\d+):/m.exec(readFileSync("/etc/group", "utf8"))?.[1]);
	for (const sub of ["conf", "data", "mail", "queue"]) mkdirSync(join(dir, sub));
	writeFileSync(join(dir, "conf", "main.cf"), MAIN_CF(dir));
	writeFileSync(join(dir, "conf", "master.cf"), MASTER_CF(smtpPort));
	writeFileSync(join(dir, "mailboxes"), "");
	writeFileSync(join(dir, "users"), "");
	chownSync(join(dir, "data"), postfixUid, 0);
	chownSync(join(dir, "mail"), MAIL_UID, MAIL_GID);
	for (const sub of QUEUE_DIRS) {
		mkdirSync(join(dir, "queue", sub));
		chownSync(join(dir, "queue", sub), postfixUid, 0);
		chmodSync(join(dir, "queue", sub), 0o700);
	}
	for (const sub of ["maildrop", "public"]) {
		mkdirSync(join(dir, "queue", sub));
		chownSync(join(dir, "queue", sub), postfixUid, postdropGid);
		chmodSync(join(dir, "queue", sub), sub === "public" ? 0o710 : 0o730);
	}
	writeFileSync(join(dir, "dovecot.conf"), DOVECOT_CONF(dir, imapPort));
	const postfixLog = () => (existsSync(join(dir, "postfix.log")) ? readFileSync(join(dir, "postfix.log"), "utf8") : "");
	const dovecotLog = () => (existsSync(join(dir, "dovecot.log")) ? readFileSync(join(dir, "dovecot.log"), "utf8") : "");
	const postfix = spawn(POSTFIX_MASTER, ["-c", join(dir, "conf"), "-d"], { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH } });
	let postfixOut = "";
	postfix.stdout?.on("data", (c: Buffer) => (postfixOut += c.toString()));
	postfix.stderr?.on("data", (c: Buffer) => (postfixOut += c.toString()));
	const dovecot = spawn(DOVECOT, ["-F", "-c", join(dir, "dovecot.conf")], { stdio: ["ignore", "pipe", "pipe"] });
	let dovecotOut = "";
	dovecot.stdout?.on("data", (c: Buffer) => (dovecotOut += c.toString()));
	dovecot.stderr?.on("data", (c: Buffer) => (dovecotOut += c.toString()));
	const stopChild = async (child: ChildProcess) => {
		if (child.exitCode !== null || child.signalCode !== null) return;
		const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
		child.kill("SIGTERM");
		const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
		await exited;
		clearTimeout(timer);
	};
	try {
		await waitForPort(smtpPort, postfix, "postfix", () => postfixOut + postfixLog());
		await waitForPort(imapPort, dovecot, "dovecot", () => dovecotOut + dovecotLog());
	} catch (error) {
		await Promise.all([stopChild(postfix), stopChild(dovecot)]);
		rmSync(dir, { recursive: true, force: true });
		throw error;
	}
	return {
		smtpPort,
		imapPort,
		addUser(local) {
			const address = `${local}@${MAIL_DOMAIN}`;
			const password = `pw-${local}-${Math.random().toString(36).slice(2)}`;
			writeFileSync(join(dir, "mailboxes"), `${address} ${MAIL_DOMAIN}/${local}/\n`, { flag: "a" });
			writeFileSync(join(dir, "users"), `${address}:{PLAIN}${password}::::::\n`, { flag: "a" });
			return { address, password };
		},
		log: () => postfixOut + postfixLog() + dovecotOut + dovecotLog(),
		stopSmtp: () => stopChild(postfix),
		async stop() {
			await Promise.all([stopChild(postfix), stopChild(dovecot)]);
			rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
		},
	};
}
