// The CLI picks its front end from the environment; tests always get the plain reporter, and
// git commands inside tests never read the developer's global config.
process.env.GIT_CONFIG_NOSYSTEM = '1';
process.env.GIT_AUTHOR_NAME = 'Relais Test';
process.env.GIT_AUTHOR_EMAIL = 'test@relais.invalid';
process.env.GIT_COMMITTER_NAME = 'Relais Test';
process.env.GIT_COMMITTER_EMAIL = 'test@relais.invalid';
