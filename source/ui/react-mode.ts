/**
 * Imported first by the UI's index, before React loads: React picks its build from NODE_ENV when
 * it is first loaded, and without one it runs its development build, which records a performance
 * measure for every render (React 19's performance tracks) and never drops them: the app's heap
 * grew with the volume of agent output (issue 17: +36 MB from 5 to 20 MB of output, flat with
 * this). A NODE_ENV the user or a test runner set is kept.
 */
process.env.NODE_ENV ??= 'production';
