# frozen_string_literal: true

# Drives the vendored Ruby client (tests/vendor/ruby-flinks) through what its users do against the
# real service: an authorize token, a cached Authorize of a saved login, the accounts summary, then
# account detail polled on GetAccountsDetailAsync/{RequestId} while it answers 202. Prints one JSON
# line of what it read, for test_ruby_client.py to check.
#
# Usage: ruby -I tests/vendor/ruby-flinks/lib drive_ruby_flinks.rb URL CUSTOMER_ID LOGIN_ID SECRET_KEY API_KEY

require 'json'
require 'flinks'

url, customer_id, login_id, secret_key, api_key = ARGV
# Its default logs every request with its headers on stdout; the keys stay off the test's output.
Flinks.log_level = :info
client = Flinks::Client.new(
  api_url: url, customer_id: customer_id, flinks_auth_key: secret_key, x_api_key: api_key, bearer_token: 'none'
)

token = client.generate_authorize_token.token
session = client.authorize_session(login_id: login_id, most_recent_cached: true, authorize_token: token)
summary = client.get_accounts_summary(request_id: session.request_id)
detail = client.get_accounts_detail(request_id: session.request_id)
rounds = 0
while detail.is_a?(Flinks::Resources::AccountDetailPending)
  rounds += 1
  raise "still pending after #{rounds} polls" if rounds > 50

  sleep 0.05
  detail = client.get_accounts_detail_async(request_id: session.request_id)
end

puts JSON.generate(
  'request_id' => session.request_id,
  'session_login_id' => session.login&.id,
  'institution_name' => session.institution_name,
  'summary_accounts' => summary.accounts.size,
  'detail_login_id' => detail.login&.id,
  'detail_accounts' => detail.accounts.size,
  'transactions' => detail.accounts.sum { |account| Array(account.transactions).size },
  'pending_rounds' => rounds
)
