/** Secrets as they appear in commands and output, for the redaction tests (unit and CLI). */
/** Each case: text with a secret, the secret itself, and what must survive around it. */
export const secretCases: { name: string; text: string; secret: string; kept?: string }[] = [
  {
    name: "GitHub token (ghp_)",
    text: "env GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a true",
    secret: "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    kept: "true",
  },
  {
    name: "GitHub fine-grained token (github_pat_)",
    text: "gh auth login --with-token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    secret: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH",
  },
  {
    name: "Stripe key (sk_live_)",
    text: 'curl -H "Authorization: Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc" https://api.stripe.com',
    secret: "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    kept: "https://api.stripe.com",
  },
  {
    name: "Slack token (xoxb-)",
    text: "notify --slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    secret: "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
  },
  {
    name: "Slack user token (xoxp-)",
    text: "SLACK=xoxp-123456789012-abcdefABCDEF done",
    secret: "xoxp-123456789012-abcdefABCDEF",
  },
  {
    name: "AWS keys",
    text: "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    secret: "AKIAIOSFODNN7EXAMPLE",
  },
  {
    name: "AWS secret access key",
    text: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ./deploy.sh",
    secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    kept: "./deploy.sh",
  },
  {
    name: "short Bearer value",
    text: "curl -H 'Authorization: Bearer xyz' x",
    secret: "xyz",
    kept: "Authorization: Bearer [redacted]' x",
  },
  {
    name: "Authorization: token (GitHub's scheme)",
    text: "curl -H 'Authorization: token abcdef0123456789' https://api.github.com",
    secret: "abcdef0123456789",
    kept: "https://api.github.com",
  },
  {
    name: "token= with a following ;",
    text: "deploy token=abc123; make",
    secret: "abc123",
    kept: "token=[redacted]; make",
  },
  {
    name: "password=",
    text: "mysql --host db password=hunter2 -e 'select 1'",
    secret: "hunter2",
    kept: "select 1",
  },
  {
    name: "--password as its own argument",
    text: "psql --password s3cr3t-value --host db",
    secret: "s3cr3t-value",
    kept: "--host db",
  },
  {
    name: "URL with user:password",
    text: "git clone https://deploy:pa55word@git.example.com/repo.git",
    secret: "pa55word",
    kept: "https://deploy:[redacted]@git.example.com/repo.git",
  },
];
