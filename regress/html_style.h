#pragma once
// The inline stylesheet and script of index.html (regress/html_report.cc): the page must work
// from a file, so nothing is loaded from anywhere.
#include <string_view>

namespace npuforge::regress {

inline constexpr std::string_view kReportCss = R"css(
:root{--ok:#2e7d32;--bad:#c62828;--err:#ef6c00;--ink:#1d2733;--muted:#5f6b7a;--line:#dfe3e8;--bg:#f5f7fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
header{display:flex;align-items:center;justify-content:space-between;padding:18px 28px;color:#fff}
header.ok{background:linear-gradient(90deg,#1b5e20,#2e7d32)}header.bad{background:linear-gradient(90deg,#8e0000,#c62828)}
header h1{margin:0;font-size:20px;font-weight:600;word-break:break-all}
.verdict{font-size:26px;font-weight:800;letter-spacing:2px;padding:2px 14px;border:2px solid #fff;border-radius:6px}
nav{padding:8px 28px;background:#fff;border-bottom:1px solid var(--line);position:sticky;top:0;z-index:2}
nav a{margin-right:14px;color:#1565c0;text-decoration:none}nav .files{float:right;color:var(--muted)}
nav .files a{margin:0 0 0 8px}
main{max-width:1280px;margin:0 auto;padding:8px 28px 40px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 20px;margin:16px 0}
h2{font-size:17px;margin:2px 0 12px}h3{font-size:15px;margin:0 0 6px}
.stats{display:flex;flex-wrap:wrap;gap:12px;max-width:1280px;margin:16px auto 0;padding:0 28px;background:none;border:0}
.stat{flex:1 1 120px;background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.stat .value{font-size:24px;font-weight:700}.stat .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.stat.pass .value{color:var(--ok)}.stat.fail .value{color:var(--bad)}.stat.error .value{color:var(--err)}
.problems{max-width:1224px;margin:16px auto;border-color:var(--bad);background:#fdecea}.problems h2{color:var(--bad)}
table{border-collapse:collapse;width:100%}th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f0f3f6;font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.4px;color:var(--muted)}
table.runs td:nth-child(n+2),table.seeds td:nth-child(n+2):not(:last-child){font-variant-numeric:tabular-nums}
tr.bad td:first-child{border-left:4px solid var(--bad)}tr.ok td:first-child{border-left:4px solid var(--ok)}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;text-transform:uppercase}
.badge.pass{background:var(--ok)}.badge.fail{background:var(--bad)}.badge.error{background:var(--err)}
article.failure{border-left:4px solid var(--bad);padding:10px 14px;margin:12px 0;background:#fffafa;border-radius:4px}
.kind{color:var(--muted);font-weight:400;font-size:13px}
.finding{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;background:#fdecea;padding:6px 8px;border-radius:4px;margin:6px 0;word-break:break-word}
.repro{display:flex;gap:8px;align-items:flex-start;margin:6px 0}
.repro code{flex:1;display:block;background:#1d2733;color:#e8eef5;padding:8px 10px;border-radius:4px;font-size:12.5px;white-space:pre-wrap;word-break:break-all}
button{font:inherit;padding:5px 12px;border:1px solid #90a4ae;border-radius:4px;background:#fff;cursor:pointer}
button:hover{background:#eef3f7}button:disabled{opacity:.4;cursor:default}
.files{color:var(--muted);font-size:13px}.files a{color:#1565c0}
details{margin:6px 0}summary{cursor:pointer;color:#1565c0}pre{font-size:12px;overflow-x:auto;background:#f7f7f9;padding:8px}
figure.timeline{margin:10px 0 4px}figure.timeline svg{width:100%;height:auto;border:1px solid var(--line);border-radius:4px}
figcaption{color:var(--muted);font-size:12.5px;margin-top:4px}
.coverage .group{display:grid;grid-template-columns:110px 220px 110px 160px 1fr;gap:10px;align-items:center;padding:8px 0;border-bottom:1px solid var(--line)}
.gname{font-weight:600}.gnum{font-variant-numeric:tabular-nums}.closed{color:var(--muted);font-size:13px}
.group.open .closed{color:var(--bad);font-weight:600}
.bar{height:10px;background:#eceff1;border-radius:5px;overflow:hidden}.bar span{display:block;height:100%;background:var(--ok)}
.group.open .bar span{background:#f9a825}
.bins{display:flex;flex-wrap:wrap;gap:4px}.bin{font-size:11.5px;padding:1px 6px;border-radius:3px;background:#e8f5e9;color:#1b5e20}
.bin b{font-weight:600}.bin.hole{background:#fdecea;color:var(--bad);outline:1px solid #ef9a9a}
svg.hist{width:100%;max-width:900px;height:auto}svg.hist .ok{fill:#66bb6a}svg.hist .bad{fill:#e53935}
svg.hist .axis{stroke:#90a4ae}svg.hist .tick{font-size:11px;fill:var(--muted)}
.controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin-bottom:8px}
.controls input,.controls select{font:inherit;padding:4px 6px;border:1px solid #b0bec5;border-radius:4px}
table.seeds th{cursor:pointer}table.seeds td:last-child{font-family:ui-monospace,monospace;font-size:12px;color:var(--bad)}
table.seeds tr.fail td,table.seeds tr.error td{background:#fff5f5}
.note,.none{color:var(--muted)}.none{color:var(--ok);font-weight:600}
footer{text-align:center;color:var(--muted);font-size:12px;padding:20px}
)css";

inline constexpr std::string_view kReportJs = R"js(
function copyRepro(btn){
  var text=btn.parentElement.querySelector('code').textContent;
  function done(){btn.textContent='Copied';setTimeout(function(){btn.textContent='Copy';},1500);}
  function fallback(){var a=document.createElement('textarea');a.value=text;document.body.appendChild(a);a.select();
    try{document.execCommand('copy');done();}catch(e){}a.remove();}
  if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(text).then(done,fallback);}else{fallback();}
}
(function(){
  var data=JSON.parse(document.getElementById('seed-data').textContent);
  var rows=document.getElementById('seed-rows'),status=document.getElementById('f-status'),text=document.getElementById('f-text');
  var count=document.getElementById('f-count'),pageLabel=document.getElementById('f-page');
  var prev=document.getElementById('f-prev'),next=document.getElementById('f-next');
  var pageSize=100,page=0,sortKey=-1,sortDir=1,view=data;
  function esc(s){return String(s).replace(/[&<>"']/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c];});}
  function filter(){
    var st=status.value,q=text.value.toLowerCase();
    view=data.filter(function(d){return(!st||d[2]===st)&&(!q||(d[0]+':'+d[1]+' '+d[8]).toLowerCase().indexOf(q)>=0);});
    if(sortKey>=0){view=view.slice().sort(function(a,b){return(a[sortKey]<b[sortKey]?-1:a[sortKey]>b[sortKey]?1:0)*sortDir;});}
    page=0;render();
  }
  function render(){
    var pages=Math.max(1,Math.ceil(view.length/pageSize));page=Math.min(page,pages-1);
    var html=[];
    view.slice(page*pageSize,(page+1)*pageSize).forEach(function(d){
      var id=d[0]+'-'+d[1];
      var seed=d[2]==='pass'?d[1]:'<a href="#seed-'+esc(id)+'">'+d[1]+'</a>';
      html.push('<tr class="'+d[2]+'"><td>'+esc(d[0])+'</td><td>'+seed+'</td><td><span class="badge '+d[2]+'">'+d[2]+
        '</span></td><td>'+d[3]+'</td><td>'+d[4]+'</td><td>'+d[5]+'</td><td>'+d[6].toFixed(1)+'</td><td>'+d[7].toFixed(2)+
        '</td><td>'+esc(d[8])+'</td></tr>');
    });
    rows.innerHTML=html.join('');
    count.textContent=view.length+' of '+data.length+' seeds';
    pageLabel.textContent='page '+(page+1)+' of '+pages;
    prev.disabled=page===0;next.disabled=page>=pages-1;
  }
  status.addEventListener('change',filter);text.addEventListener('input',filter);
  prev.addEventListener('click',function(){page--;render();});next.addEventListener('click',function(){page++;render();});
  document.querySelectorAll('table.seeds th').forEach(function(th){th.addEventListener('click',function(){
    var k=+th.getAttribute('data-k');sortDir=sortKey===k?-sortDir:1;sortKey=k;filter();});});
  filter();
})();
)js";

}  // namespace npuforge::regress
