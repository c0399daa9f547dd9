module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'event-stream',
  rootDir: __dirname,
};
